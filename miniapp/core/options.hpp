#pragma once
// The one command-line parser of every command (miniapp/commands/*). A command declares its
// options with what to do with each, then parse() walks argv once:
// - a long option's value comes as --name=VALUE or --name VALUE, a short one's as -n VALUE;
// - an empty value, a missing one, an unknown option and an operand where none is accepted are
//   UsageErrors, as is whatever a handler throws as one (its own checks: a number out of range);
// - every command reports a UsageError through usage_error(): on stderr, with its name and a
//   pointer to its --help, and exit code 2.

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace miniapp {

// The command line itself is wrong: nothing ran. The message says what, and points at --help.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class OptionParser {
 public:
  // A switch: `names` is "-q,--quiet" or "--dry-run".
  OptionParser& flag(const std::string& names, std::function<void()> on);
  // An option with a value; `on` gets the value.
  OptionParser& value(const std::string& names, std::function<void(const std::string&)> on);
  // Every argument that starts with `prefix` (e.g. "--kokkos-"), handed over whole.
  OptionParser& prefixed(const std::string& prefix, std::function<void(const std::string&)> on);
  // The arguments that are not options (a deck, results directories); without this, one is an error.
  OptionParser& operands(std::function<void(const std::string&)> on);

  // Parses argv[first..argc). Throws UsageError.
  void parse(int argc, char** argv, int first = 1) const;

 private:
  struct Option {
    std::vector<std::string> names;
    std::function<void()> on_flag;
    std::function<void(const std::string&)> on_value;
  };
  const Option* find(const std::string& name) const;

  std::vector<Option> options_;
  std::vector<std::pair<std::string, std::function<void(const std::string&)>>> prefixed_;
  std::function<void(const std::string&)> operands_;
};

// Prints "<command>: <what is wrong> (see <command> --help)" on stderr; returns exit code 2.
int usage_error(const std::string& command, const UsageError& e);

// A whole number in [lowest, highest], or a UsageError naming the option.
long parse_whole_number(const std::string& option, const std::string& value, long lowest, long highest);

// "a,b,,c" -> {"a", "b", "c"}
std::vector<std::string> split_list(const std::string& s, char separator = ',');

}  // namespace miniapp
