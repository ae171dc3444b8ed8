#pragma once
// The command line of a run (`miniapp [options] DECK.yaml`): its options, their checks and the
// binary's --help text.

#include "miniapp/core/deck.hpp"
#include "miniapp/core/options.hpp"  // UsageError

#include <ostream>
#include <string>
#include <vector>

namespace miniapp {

extern const char* const kRunUsage;

struct CommandLine {
  std::string deck;
  std::string output;
  std::string case_selector;  // --case: one case of the deck, by index or name
  bool help = false, version = false, list = false, dry_run = false, quiet = false, calibrate = true,
       recalibrate = false, kernel_times = false;
  Overrides overrides;
  std::vector<std::string> kokkos_args;
};

// Throws UsageError with what is wrong; argv[0] is the binary.
CommandLine parse_command_line(int argc, char** argv);

// --version and --list.
void print_version(std::ostream& os);
void print_list(std::ostream& os);

}  // namespace miniapp
