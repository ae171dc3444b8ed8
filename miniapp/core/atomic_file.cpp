#include "miniapp/core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace miniapp {

namespace {
// Every byte of content to fd, or the error (EINTR retried, short writes continued).
int write_all(int fd, const std::string& content) {
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  return 0;
}
}  // namespace

WriteError::WriteError(const std::string& path, const std::string& what, int error_number)
    : std::runtime_error("cannot write " + path + ": " + what + ": " + std::strerror(error_number)), path(path) {}

void write_atomically(const std::string& path, const std::string& content) {
  // Per process: two processes writing one file (jobs sharing a machine-wide calibration cache)
  // never write into each other's temporary file; the last rename wins, whole.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw WriteError(path, "creating " + tmp, errno);
  // The new content is on disk (fsync) before it replaces the old file, so a crash or a full disk
  // leaves either the previous complete file or the new one, never a truncated one.
  int error = write_all(fd, content);
  std::string step = "writing " + tmp;
  if (error == 0 && ::fsync(fd) != 0) error = errno, step = "flushing " + tmp;
  if (::close(fd) != 0 && error == 0) error = errno, step = "closing " + tmp;
  if (error == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) error = errno, step = "renaming " + tmp;
  if (error != 0) {
    ::unlink(tmp.c_str());
    throw WriteError(path, step, error);
  }
  // The rename itself is durable once the directory is flushed.
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) throw WriteError(path, "opening directory " + dir, errno);
  error = ::fsync(dir_fd) != 0 ? errno : 0;
  ::close(dir_fd);
  if (error != 0 && error != EINVAL) throw WriteError(path, "flushing directory " + dir, error);
}

}  // namespace miniapp
