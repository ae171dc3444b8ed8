#include "miniapp/core/diagnostics.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <limits>

namespace miniapp {

std::string format(const Diagnostic& d) {
  std::string s = d.file;
  if (d.line > 0) s += ":" + std::to_string(d.line) + ":" + std::to_string(d.column);
  s += ": ";
  if (!d.path.empty()) s += d.path + ": ";
  return s + d.message;
}

void Diagnostics::error(const YAML::Node& where, const std::string& path, const std::string& message) {
  const YAML::Mark mark = where.IsDefined() ? where.Mark() : YAML::Mark::null_mark();
  error_at(mark.line >= 0 ? mark.line + 1 : 0, mark.column >= 0 ? mark.column + 1 : 0, path, message);
}

void Diagnostics::error_at(int line, int column, const std::string& path, const std::string& message) {
  // A value in the deck's defaults is read by every case: report its problem once.
  for (const Diagnostic& d : list_)
    if (d.line == line && d.column == column && d.path == path && d.message == message) return;
  list_.push_back({file_, line, column, path, message});
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& x : names) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  // A suggestion that shares less than half the word misleads more than it helps.
  return best_distance <= std::max<std::size_t>(2, word.size() / 2) ? best : std::string();
}

}  // namespace miniapp
