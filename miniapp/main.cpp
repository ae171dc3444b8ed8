// miniapp: runs the experiments of a YAML deck on every requested Kokkos execution space and
// mirror policy, verifies every result and reports time per phase, rates and speedups; and the
// commands around a run (miniapp/commands/, one folder each).

#include "miniapp/commands/commands.hpp"

#include <cstring>

namespace {

// Each entry gets the whole argv (argv[1] is its name).
struct Subcommand {
  const char* name;
  int (*run)(int argc, char** argv);
};

constexpr Subcommand kSubcommands[] = {
    {"submit", [](int argc, char** argv) { return miniapp::submit::run_submit(argc - 1, argv + 1); }},
    {"queue-wait", [](int argc, char** argv) { return miniapp::submit::run_queue_wait(argc - 1, argv + 1); }},
    {"merge", [](int argc, char** argv) { return miniapp::run_merge(argc - 1, argv + 1); }},
    {"report", miniapp::run_report_subcommand},
    {"advise", miniapp::run_report_subcommand},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1)
    for (const Subcommand& s : kSubcommands)
      if (std::strcmp(argv[1], s.name) == 0) return s.run(argc, argv);
  return miniapp::run_deck_command(argc, argv);
}
