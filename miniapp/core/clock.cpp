#include "miniapp/core/clock.hpp"

#include <ctime>

namespace miniapp {

namespace {
std::string format_now(const char* format, bool utc) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  if (utc) gmtime_r(&t, &tm);
  else localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}
}  // namespace

std::string now_iso8601() { return format_now("%Y-%m-%dT%H:%M:%SZ", true); }

std::string local_timestamp() { return format_now("%Y%m%d-%H%M%S", false); }

}  // namespace miniapp
