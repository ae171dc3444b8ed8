#pragma once
// Deck problems as values: every one names file, line, column, key path, what was found and
// what was expected. Validation collects them all before anything runs.

#include <string>
#include <vector>

namespace YAML {
class Node;
}

namespace miniapp {

struct Diagnostic {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based
  std::string path;  // key path, e.g. cases[0].sizes
  std::string message;
};

std::string format(const Diagnostic& d);

class Diagnostics {
 public:
  explicit Diagnostics(std::string file) : file_(std::move(file)) {}
  void error(const YAML::Node& where, const std::string& path, const std::string& message);
  void error_at(int line, int column, const std::string& path, const std::string& message);
  const std::vector<Diagnostic>& all() const { return list_; }
  bool empty() const { return list_.empty(); }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<Diagnostic> list_;
};

// "a, b, c": lists of valid names in messages.
std::string join(const std::vector<std::string>& names);

// Edit distance, for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace miniapp
