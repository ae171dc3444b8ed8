#pragma once
// The command line of `miniapp submit`: its options, their checks and its --help text.

#include "miniapp/commands/submit/batch_script.hpp"
#include "miniapp/core/options.hpp"  // UsageError

#include <optional>
#include <string>

namespace miniapp::submit {

extern const char* const kUsage;

using ::miniapp::UsageError;

enum class Mode { Write, Print, TestOnly, Submit };

struct Options {
  std::string deck, site, sites_dir, results = "results", script, binary, gpu_binary;
  std::optional<std::string> account, time, partition;
  std::optional<int> cpus, gpus, throttle, ranks;
  std::optional<JobKind> kind;
  bool array = false, twin = false, help = false;
  Mode mode = Mode::Write;
};

// Throws UsageError with what is wrong; argv[0] is "submit".
Options parse(int argc, char** argv);

}  // namespace miniapp::submit
