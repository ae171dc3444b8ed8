#pragma once
// Files that are either whole or absent: every results, calibration and job file is written here.

#include <stdexcept>
#include <string>

namespace miniapp {

// A file that could not be written: the path, the step and the system's error.
struct WriteError : std::runtime_error {
  WriteError(const std::string& path, const std::string& what, int error_number);
  std::string path;
};

// Writes and fsyncs path.tmp, renames it over path and fsyncs the directory: a reader never sees
// a half-written file, and a failed write (full disk, file size limit) leaves the previous file
// in place and throws WriteError.
void write_atomically(const std::string& path, const std::string& content);

}  // namespace miniapp
