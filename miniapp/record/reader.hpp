#pragma once
// The one C++ reader of results files (merge, report, advise): where a directory's runs are, a
// results.json loaded and checked against the schema name, and accessors that never throw on
// absent keys. yaml-cpp reads JSON (a subset of YAML 1.2).

#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace miniapp::results {

// A results file that cannot be used, and why.
struct ReadError : std::runtime_error {
  enum class Kind { NotJson, NotObject, WrongSchema };
  ReadError(Kind kind, const std::string& file, const std::string& what, int line = 0, int column = 0)
      : std::runtime_error(what), kind(kind), file(file), line(line), column(column) {}
  Kind kind;
  std::string file;
  int line, column;  // 1-based, for NotJson
};

// Loads file and checks that it is a JSON object of our schema (record/schema.hpp); throws ReadError.
YAML::Node load(const std::string& file);

// The runs a results directory holds: DIR itself when it has results.json (or is no directory),
// else each threads-N/ of a thread sweep holding one, in order of N (none: DIR itself).
std::vector<std::string> run_directories(const std::string& dir);

YAML::Node child(const YAML::Node& n, const char* key);
std::string text(const YAML::Node& n, const char* key, const std::string& fallback = "");
double number(const YAML::Node& n, const char* key);  // 0 when absent or not a number
bool flag(const YAML::Node& n, const char* key);
std::vector<double> samples(const YAML::Node& seconds, const char* phase);
std::string environment(const YAML::Node& results, const char* name);  // provenance.environment[name]

}  // namespace miniapp::results
