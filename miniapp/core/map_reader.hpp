#pragma once
// Reads one YAML mapping of the deck, checking types and ranges as it goes, and at finish()
// reports keys nobody asked for (with the nearest valid key) and duplicated keys.

#include "miniapp/core/diagnostics.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace miniapp {

class MapReader {
 public:
  MapReader(const YAML::Node& map, std::string path, Diagnostics& diag);

  // Keys absent from this mapping are looked up in `defaults` (the deck's `defaults:` block);
  // messages about a value taken from there name its path and line there.
  void fall_back_to(const YAML::Node& defaults, std::string defaults_path);

  bool valid() const { return valid_; }
  const YAML::Node& map() const { return map_; }
  const std::string& path() const { return path_; }
  Diagnostics& diagnostics() { return diag_; }
  std::string key_path(const std::string& key) const;

  // The node under `key` (an invalid node when absent); marks the key as known.
  YAML::Node node(const std::string& key);
  bool has(const std::string& key);

  std::optional<std::string> string(const std::string& key);
  std::optional<std::int64_t> integer(const std::string& key, std::int64_t min, std::int64_t max);
  std::optional<double> real(const std::string& key, double min_exclusive);
  std::optional<bool> boolean(const std::string& key);
  // One of `allowed`; reports the nearest allowed name otherwise.
  std::optional<std::string> choice(const std::string& key, const std::vector<std::string>& allowed);
  // A name, a list of names, or "all" (returned as `allowed` itself).
  std::optional<std::vector<std::string>> choices(const std::string& key, const std::vector<std::string>& allowed,
                                                  bool allow_all);

  void finish();
  // Every key asked for so far: the valid keys of this mapping.
  const std::vector<std::string>& known() const { return known_; }
  // Reports keys of this mapping that are not in `valid`, with the nearest valid one.
  void finish_with(const std::vector<std::string>& valid);

 private:
  YAML::Node lookup(const YAML::Node& map, const std::string& key) const;
  YAML::Node defaults_{YAML::NodeType::Undefined};
  std::string defaults_path_;
  YAML::Node map_;
  std::string path_;
  Diagnostics& diag_;
  bool valid_ = false;
  std::vector<std::string> known_;
};

// The YAML document in `text`, or nothing with "YAML syntax error: ..." at its line and column
// in `diag` (the deck and the site profiles are read this way).
std::optional<YAML::Node> parse_yaml(const std::string& text, Diagnostics& diag);

// The whole file, or nothing when it cannot be opened.
std::optional<std::string> read_text_file(const std::string& path);

// Scalar conversions with a clear message on failure; they record nothing themselves.
std::optional<std::int64_t> as_integer(const YAML::Node& n);
std::optional<double> as_real(const YAML::Node& n);
std::string describe_node(const YAML::Node& n);

}  // namespace miniapp
