#include "miniapp/core/map_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace miniapp {

namespace {
std::string format_number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
}  // namespace

std::string describe_node(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "'" + n.Scalar() + "'";
}

std::optional<std::int64_t> as_integer(const YAML::Node& n) {
  if (!n.IsScalar()) return std::nullopt;
  const std::string& s = n.Scalar();
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno == 0 && end && *end == '\0') return v;
  // Accept 1e6-style sizes when they are whole numbers.
  const std::optional<double> d = as_real(n);
  // The range first: converting a double beyond int64's range is undefined behaviour.
  if (d && std::abs(*d) < 9.0e18 && *d == std::trunc(*d)) return static_cast<std::int64_t>(*d);
  return std::nullopt;
}

std::optional<double> as_real(const YAML::Node& n) {
  if (!n.IsScalar()) return std::nullopt;
  const std::string& s = n.Scalar();
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno == 0 && end && *end == '\0') return v;
  return std::nullopt;
}

MapReader::MapReader(const YAML::Node& map, std::string path, Diagnostics& diag)
    : map_(map), path_(std::move(path)), diag_(diag) {
  if (!map.IsMap()) {
    diag_.error(map, path_, "found " + describe_node(map) + ", expected a mapping of keys to values");
    return;
  }
  valid_ = true;
  // yaml-cpp keeps every pair of a mapping, so a repeated key is still visible here.
  std::map<std::string, int> first_line;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = it->first.Scalar();
    const int line = it->first.Mark().line + 1;
    auto [pos, inserted] = first_line.emplace(key, line);
    if (!inserted)
      diag_.error(it->first, key_path(key), "duplicate key (first given on line " + std::to_string(pos->second) + ")");
  }
}

void MapReader::fall_back_to(const YAML::Node& defaults, std::string defaults_path) {
  if (defaults.IsMap()) defaults_ = defaults;
  defaults_path_ = std::move(defaults_path);
}

YAML::Node MapReader::lookup(const YAML::Node& map, const std::string& key) const {
  if (map.IsMap())
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->first.Scalar() == key) return it->second;
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string MapReader::key_path(const std::string& key) const {
  const bool from_defaults = !lookup(map_, key).IsDefined() && lookup(defaults_, key).IsDefined();
  const std::string& prefix = from_defaults ? defaults_path_ : path_;
  return prefix.empty() ? key : prefix + "." + key;
}

YAML::Node MapReader::node(const std::string& key) {
  known_.push_back(key);
  if (!valid_) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node own = lookup(map_, key);
  return own.IsDefined() ? own : lookup(defaults_, key);
}

bool MapReader::has(const std::string& key) { return node(key).IsDefined(); }

std::optional<std::string> MapReader::string(const std::string& key) {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return std::nullopt;
  if (!n.IsScalar()) {
    diag_.error(n, key_path(key), "found " + describe_node(n) + ", expected a string");
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<std::int64_t> MapReader::integer(const std::string& key, std::int64_t min, std::int64_t max) {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return std::nullopt;
  const std::optional<std::int64_t> v = as_integer(n);
  if (!v || *v < min || *v > max) {
    diag_.error(n, key_path(key),
                "found " + describe_node(n) + ", expected an integer from " + std::to_string(min) + " to " +
                    std::to_string(max));
    return std::nullopt;
  }
  return v;
}

std::optional<double> MapReader::real(const std::string& key, double min_exclusive) {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return std::nullopt;
  const std::optional<double> v = as_real(n);
  if (!v || !(*v > min_exclusive)) {
    diag_.error(n, key_path(key),
                "found " + describe_node(n) + ", expected a number greater than " + format_number(min_exclusive));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> MapReader::boolean(const std::string& key) {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return std::nullopt;
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  diag_.error(n, key_path(key), "found " + describe_node(n) + ", expected true or false");
  return std::nullopt;
}

namespace {
bool check_choice(Diagnostics& diag, const YAML::Node& n, const std::string& path,
                  const std::vector<std::string>& allowed) {
  if (!n.IsScalar()) {
    diag.error(n, path, "found " + describe_node(n) + ", expected one of: " + join(allowed));
    return false;
  }
  if (std::find(allowed.begin(), allowed.end(), n.Scalar()) != allowed.end()) return true;
  const std::string hint = nearest(n.Scalar(), allowed);
  diag.error(n, path,
             "found " + describe_node(n) + ", expected one of: " + join(allowed) +
                 (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  return false;
}
}  // namespace

std::optional<std::string> MapReader::choice(const std::string& key, const std::vector<std::string>& allowed) {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return std::nullopt;
  if (!check_choice(diag_, n, key_path(key), allowed)) return std::nullopt;
  return n.Scalar();
}

std::optional<std::vector<std::string>> MapReader::choices(const std::string& key,
                                                           const std::vector<std::string>& allowed, bool allow_all) {
  const YAML::Node n = node(key);
  if (!n.IsDefined()) return std::nullopt;
  if (allow_all && n.IsScalar() && n.Scalar() == "all") return allowed;
  std::vector<std::string> out;
  bool ok = true;
  if (n.IsSequence()) {
    if (n.size() == 0) {
      diag_.error(n, key_path(key), "found an empty list, expected at least one of: " + join(allowed));
      return std::nullopt;
    }
    for (std::size_t i = 0; i < n.size(); ++i) {
      if (check_choice(diag_, n[i], key_path(key) + "[" + std::to_string(i) + "]", allowed))
        out.push_back(n[i].Scalar());
      else
        ok = false;
    }
  } else if (check_choice(diag_, n, key_path(key), allowed)) {
    out.push_back(n.Scalar());
  } else {
    ok = false;
  }
  if (!ok) return std::nullopt;
  return out;
}

void MapReader::finish() { finish_with(known_); }

void MapReader::finish_with(const std::vector<std::string>& valid) {
  if (!valid_) return;
  for (auto it = map_.begin(); it != map_.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (std::find(valid.begin(), valid.end(), key) != valid.end()) continue;
    const std::string hint = nearest(key, valid);
    diag_.error(it->first, path_.empty() ? key : path_ + "." + key,
                "unknown key" + (hint.empty() ? std::string(", expected one of: ") + join(valid)
                                              : " (did you mean '" + hint + "'?)"));
  }
}

std::optional<YAML::Node> parse_yaml(const std::string& text, Diagnostics& diag) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    diag.error_at(e.mark.line + 1, e.mark.column + 1, "", "YAML syntax error: " + e.msg);
    return std::nullopt;
  }
}

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace miniapp
