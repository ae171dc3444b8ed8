#pragma once
// Wall-clock timestamps: ISO 8601 (UTC) for records, local YYYYmmdd-HHMMSS for new file names.

#include <string>

namespace miniapp {

std::string now_iso8601();
// Local time as YYYYmmdd-HHMMSS, for the names of new output directories and job files.
std::string local_timestamp();

}  // namespace miniapp
