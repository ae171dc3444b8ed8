#include "miniapp/commands/run/command_line.hpp"

#include "miniapp/core/diagnostics.hpp"
#include "miniapp/core/spaces.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace miniapp {

const char* const kRunUsage = R"(usage: miniapp [options] DECK.yaml
       miniapp submit DECK --site NAME [options]   a batch script for a site's Slurm
       miniapp merge DIR... [options]              collate results of array tasks, twins
       miniapp queue-wait [options]                median queue wait per partition (sacct)
       miniapp report RESULTS_DIR... [-o OUT]      plots and the answer as one report.html
       miniapp advise [DECK | RESULTS_DIR...]     GPU or CPU? (no argument: a built-in sweep first)

Runs every case of the YAML deck on the requested Kokkos execution spaces and mirror
policies, verifies each result, prints a table per case and writes results.json,
results.csv and benchmark.json into the output directory.

options:
  -h, --help          show this help and exit
      --version       show version, git commit, compiler, Kokkos versions and spaces
      --list          list workloads, variants, compiled spaces and mirror policies
      --dry-run       validate the deck and print the plan; run nothing
  -o, --output DIR    output directory (default: deck's output, else results/<deck>-<time>)
      --spaces LIST   comma-separated spaces for every case, e.g. serial,openmp
      --sizes LIST    comma-separated sizes for every case, e.g. 256,512
      --case N|NAME   run only this case of the deck (index from 0, or its name)
      --no-calibrate  skip the calibration probe. On by default: a few seconds per space, it
                      measures each space's stream bandwidth, GEMM rate, launch latency and
                      host<->device link, and every measurement is placed under those roofs.
                      Kept in OUT/calibration.json and reused by later runs into OUT; also kept
                      for 24 hours per host, build and thread count in $MINIAPP_CALIBRATION_CACHE
                      (default ~/.cache/kokkos-miniapp), so short runs on one machine probe once
      --recalibrate   probe again even where a cached calibration exists
  -q, --quiet         no progress on stderr, no tables on stdout
  --kokkos-...        passed to Kokkos (e.g. --kokkos-num-threads=2; see --kokkos-help)

exit codes:
  0  every measurement ran and verified
  1  a verification failed (a calibration probe's own check included)
  2  bad deck or command line (nothing ran)
  3  runtime error (allocation failure, device error, unwritable output)
  128+N  stopped by signal N (SIGTERM: 143); finished results are kept
)";

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

CommandLine parse_command_line(int argc, char** argv) {
  CommandLine cli;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const std::string& name) -> std::string {
      const auto eq = a.find('=');
      if (eq != std::string::npos) return a.substr(eq + 1);
      if (i + 1 >= argc) throw UsageError(name + " needs a value");
      return argv[++i];
    };
    auto is = [&](const char* name) { return a == name || a.rfind(std::string(name) + "=", 0) == 0; };
    if (a == "-h" || a == "--help") cli.help = true;
    else if (a == "--version") cli.version = true;
    else if (a == "--list") cli.list = true;
    else if (a == "--dry-run") cli.dry_run = true;
    else if (a == "-q" || a == "--quiet") cli.quiet = true;
    else if (a == "--no-calibrate") cli.calibrate = false;
    else if (a == "--recalibrate") cli.recalibrate = true;
    else if (is("-o") || is("--output")) cli.output = value("--output");
    else if (is("--case")) cli.case_selector = value("--case");
    else if (is("--spaces")) cli.overrides.spaces = split(value("--spaces"));
    else if (is("--sizes")) {
      std::vector<std::size_t> sizes;
      for (const std::string& s : split(value("--sizes"))) {
        char* end = nullptr;
        const long long v = std::strtoll(s.c_str(), &end, 10);
        if (*end != '\0' || v <= 0) throw UsageError("--sizes: '" + s + "' is not a positive integer");
        sizes.push_back(static_cast<std::size_t>(v));
      }
      if (sizes.empty()) throw UsageError("--sizes needs at least one size");
      cli.overrides.sizes = sizes;
    } else if (a.rfind("--kokkos-", 0) == 0) cli.kokkos_args.push_back(a);
    else if (!a.empty() && a[0] == '-') throw UsageError("unknown option '" + a + "' (see --help)");
    else if (cli.deck.empty()) cli.deck = a;
    else throw UsageError("only one deck is accepted; got '" + cli.deck + "' and '" + a + "'");
  }
  if (cli.overrides.spaces) {
    const auto compiled = compiled_space_names();
    for (const std::string& s : *cli.overrides.spaces)
      if (std::find(compiled.begin(), compiled.end(), s) == compiled.end()) {
        throw UsageError("--spaces: '" + s + "' is not compiled into this binary (compiled: " + join(compiled) + ")");
      }
  }
  if (!cli.help && !cli.version && !cli.list && cli.deck.empty()) throw UsageError("no deck given (see --help)");
  return cli;
}

}  // namespace miniapp
