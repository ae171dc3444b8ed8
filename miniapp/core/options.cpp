#include "miniapp/core/options.hpp"

#include "miniapp/core/exit_codes.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace miniapp {

namespace {

std::vector<std::string> names_of(const std::string& names) {
  std::vector<std::string> out = split_list(names);
  for (const std::string& n : out)
    if (n.size() < 2 || n[0] != '-' || (n.size() > 2 && n[1] != '-'))
      throw std::logic_error("option name '" + n + "': expected -x or --long-name");
  return out;
}

}  // namespace

OptionParser& OptionParser::flag(const std::string& names, std::function<void()> on) {
  options_.push_back({names_of(names), std::move(on), nullptr});
  return *this;
}

OptionParser& OptionParser::value(const std::string& names, std::function<void(const std::string&)> on) {
  options_.push_back({names_of(names), nullptr, std::move(on)});
  return *this;
}

OptionParser& OptionParser::prefixed(const std::string& prefix, std::function<void(const std::string&)> on) {
  prefixed_.emplace_back(prefix, std::move(on));
  return *this;
}

OptionParser& OptionParser::operands(std::function<void(const std::string&)> on) {
  operands_ = std::move(on);
  return *this;
}

const OptionParser::Option* OptionParser::find(const std::string& name) const {
  for (const Option& o : options_)
    for (const std::string& n : o.names)
      if (n == name) return &o;
  return nullptr;
}

void OptionParser::parse(int argc, char** argv, int first) const {
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-') {  // "-" alone is an operand (stdin, by convention)
      if (!operands_) throw UsageError("unexpected argument '" + arg + "'");
      operands_(arg);
      continue;
    }
    const auto taker = std::find_if(prefixed_.begin(), prefixed_.end(),
                                    [&](const auto& p) { return arg.rfind(p.first, 0) == 0; });
    if (taker != prefixed_.end()) {
      taker->second(arg);
      continue;
    }
    const auto eq = arg.find('=');
    const bool long_form = arg[1] == '-';
    const std::string name = long_form && eq != std::string::npos ? arg.substr(0, eq) : arg;
    const Option* option = find(name);
    if (!option) throw UsageError("unknown option '" + arg + "'");
    // The long name, for messages: "--output needs a value" whether -o or --output was typed.
    const std::string& shown = option->names.back();
    if (option->on_flag) {
      if (name != arg) throw UsageError(shown + " takes no value");
      option->on_flag();
      continue;
    }
    std::string value;
    if (name != arg) value = arg.substr(eq + 1);
    else if (i + 1 < argc) value = argv[++i];
    else throw UsageError(shown + " needs a value");
    if (value.empty()) throw UsageError(shown + " needs a value");
    option->on_value(value);
  }
}

int usage_error(const std::string& command, const UsageError& e) {
  std::cerr << command << ": " << e.what() << " (see " << command << " --help)\n";
  return exit_code::kBadInput;
}

long parse_whole_number(const std::string& option, const std::string& value, long lowest, long highest) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno == ERANGE || v < lowest || v > highest)
    throw UsageError(option + ": '" + value + "' is not a whole number from " + std::to_string(lowest) + " to " +
                     std::to_string(highest));
  return v;
}

std::vector<std::string> split_list(const std::string& s, char separator) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, separator))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace miniapp
