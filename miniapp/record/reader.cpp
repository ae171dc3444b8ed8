#include "miniapp/record/reader.hpp"

#include "miniapp/record/schema.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <utility>

namespace fs = std::filesystem;

namespace miniapp::results {

YAML::Node load(const std::string& file) {
  YAML::Node doc;
  try {
    doc = YAML::LoadFile(file);
  } catch (const YAML::Exception& e) {
    throw ReadError(ReadError::Kind::NotJson, file, e.msg, e.mark.line + 1, e.mark.column + 1);
  }
  if (!doc.IsMap()) throw ReadError(ReadError::Kind::NotObject, file, "the top level is not an object");
  const std::string found = text(doc, "schema");
  if (found != kResultsSchema) throw ReadError(ReadError::Kind::WrongSchema, file, found);
  return doc;
}

std::vector<std::string> run_directories(const std::string& dir) {
  std::error_code ec;
  if (fs::is_regular_file(fs::path(dir) / "results.json", ec) || !fs::is_directory(dir, ec)) return {dir};
  std::vector<std::pair<long, std::string>> sweep;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("threads-", 0) == 0 && fs::is_regular_file(e.path() / "results.json", ec))
      sweep.emplace_back(std::strtol(name.c_str() + 8, nullptr, 10), e.path().string());
  }
  if (sweep.empty()) return {dir};
  std::sort(sweep.begin(), sweep.end());
  std::vector<std::string> out;
  for (const auto& s : sweep) out.push_back(s.second);
  return out;
}

YAML::Node child(const YAML::Node& n, const char* key) {
  if (!n.IsDefined() || !n.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node c = n[key];  // a missing key gives an invalid node, which throws when asked its type
  return c.IsDefined() ? c : YAML::Node(YAML::NodeType::Undefined);
}
std::string text(const YAML::Node& n, const char* key, const std::string& fallback) {
  const YAML::Node c = child(n, key);
  return c.IsScalar() ? c.Scalar() : fallback;
}
double number(const YAML::Node& n, const char* key) {
  const YAML::Node c = child(n, key);
  if (!c.IsScalar()) return 0;
  char* end = nullptr;
  const double v = std::strtod(c.Scalar().c_str(), &end);
  return end && *end == '\0' ? v : 0;
}
bool flag(const YAML::Node& n, const char* key) { return text(n, key) == "true"; }
std::vector<double> samples(const YAML::Node& seconds, const char* phase) {
  std::vector<double> out;
  const YAML::Node s = child(child(seconds, phase), "samples");
  if (s.IsSequence())
    for (const YAML::Node& v : s) out.push_back(v.IsScalar() ? std::strtod(v.Scalar().c_str(), nullptr) : 0.0);
  return out;
}
std::string environment(const YAML::Node& results, const char* name) {
  return text(child(child(results, "provenance"), "environment"), name);
}

}  // namespace miniapp::results
