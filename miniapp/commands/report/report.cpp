#include "miniapp/commands/commands.hpp"

#include "miniapp/advise_deck.hpp"
#include "miniapp/core/child_process.hpp"
#include "miniapp/core/exit_codes.hpp"
#include "miniapp/core/options.hpp"
#include "miniapp/core/atomic_file.hpp"
#include "miniapp/core/clock.hpp"
#include "miniapp/record/reader.hpp"
#include "miniapp/record/schema.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#ifndef MINIAPP_SOURCE_DIR
#define MINIAPP_SOURCE_DIR ""
#endif

namespace fs = std::filesystem;

namespace miniapp {
namespace {


constexpr const char* kReportUsage = R"(usage: miniapp report RESULTS_DIR... [-o OUT] [--assume-device NAME] [--link-GBps X]

Writes OUT/report.html, one self-contained page (figures inlined; opens anywhere after scp),
and next to it the figures as PNGs, plot-data.json (the data of every figure as drawn) and
advice.json (the advisor's conclusions, as `miniapp advise` prints them):
  - median time per iteration against size per space and variant, log-log, crossovers marked;
  - time per phase (host->device, compute, device->host) per space and mirror policy;
  - speedup against host threads where a thread sweep ran (`threads: [1, 2, 4]` in the deck);
  - a roofline per space where the results carry calibration data (else it says so);
  - the advisor's answer per case and the provenance (machine, CPU, GPU, versions, deck).

A RESULTS_DIR is an output directory of miniapp: it holds results.json, or threads-N/results.json
of a thread sweep. Several directories are read together (e.g. a host run and a GPU run).

options:
  -o, --output OUT        output directory (default: RESULTS_DIR/report of the first one)
      --assume-device NAME  also predict for a device: H100, H200, A100 or MI250X (published
                          figures in scripts/report/devices.json), a described one
                          'peak64=GFLOPs,peak32=GFLOPs,bandwidth=GBps,link=GBps[,launch=us][,name=X]'
                          or FILE.json (one profile in devices.json's shape); labelled as a
                          prediction, never mixed with measurements. Default: the profile matching
                          the GPU the results were measured on, if any; `none`: no prediction
      --link-GBps X       host<->device link bandwidth for the transfer analysis (default: measured
                          copies, else calibration, else the assumed device's, else seed 003's 15)
  -h, --help              show this help and exit

Needs python3 with matplotlib (Debian: python3-matplotlib; scripts/bootstrap-debian.sh
--report-packages installs it). MINIAPP_PYTHON picks the interpreter, MINIAPP_REPORT_SCRIPT
the script.

exit codes:
  0  report written
  2  bad input: a directory missing, no results.json, another schema, no measurements, an
     unknown device, a bad option
  3  runtime error: no python3 with matplotlib, output not writable
)";

constexpr const char* kAdviseUsage = R"(usage: miniapp advise [DECK.yaml] [-o DIR] [--assume-device NAME] [--link-GBps X]
       miniapp advise RESULTS_DIR... [-o DIR] [--assume-device NAME] [--link-GBps X]

Answers "is a GPU (or more CPU cores) worth it, copies included?". Without arguments it first
runs its built-in sweep (input/advise.yaml, compiled in: the four workloads over a range of sizes
on every compiled space, host threads 1, 2, 4, ... up to the CPUs of the job) into DIR (default
results/advise-<time>); with a DECK it runs that deck into DIR instead; with RESULTS_DIRs it runs
nothing and reads them. The run's progress goes to stderr, its tables to DIR/tables.txt. Then it
prints, per case, variant and precision:
  - the crossover size where a device space beats the best host space (a) with data resident,
    (b) copying every iteration, or "never in the measured range" with the range;
  - Serial against OpenMP/Threads, and the best thread count where a thread sweep ran;
  - the flops per transferred value from which copies amortise (seed 003's reasoning) at the
    stated link bandwidth, against what the workload does;
  - with --assume-device, a roofline PREDICTION for a device, labelled as such; for results
    measured on a GPU with a published profile, that profile's prediction next to the
    measurements, and measured/predicted per size (the model check);
  - one line per case: the fastest configuration per size range.
Every number used is printed. The same data goes to DIR/advice.json.

Examples:
  miniapp advise                                      # the built-in sweep, then the advice
  miniapp advise input/distance-seed002-small-n-sweep.yaml -o results/sweep
  miniapp advise results/sweep --assume-device H100   # again, from the results already there

options:
  -o, --output DIR        where the sweep's results and advice.json go (default: a new
                          results/advise-<time>, or the first RESULTS_DIR)
      --assume-device NAME  predict for H100, H200, A100 or MI250X (scripts/report/devices.json),
                          a described device 'peak64=9700,peak32=19500,bandwidth=2039,link=25'
                          (GFLOP/s, GB/s; optional launch=us, name=X) or FILE.json; checked before
                          a sweep runs. Default: the profile matching the measured GPU, if any;
                          none: no prediction
      --link-GBps X       host<->device link bandwidth (default: measured copies, else calibration,
                          else the assumed device's, else seed 003's 15 GB/s)
  -h, --help              show this help and exit

Needs python3 (the standard library only). MINIAPP_PYTHON picks the interpreter.

exit codes:
  0  advice printed and advice.json written
  1  the sweep it ran had a failed verification: no advice from wrong results
  2  bad input: a bad deck, as for `miniapp report`, and results with one size only
  3  runtime error: no python3, advice.json not writable, the sweep could not run
  128+N  the sweep was stopped by signal N (its finished results are kept in DIR)
)";

struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct RuntimeProblem : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Arguments {
  std::string subcommand;
  std::string deck;          // advise: a deck to run first ("" with no directories: the built-in sweep)
  std::string output;        // -o, as given
  std::vector<std::string> directories;
  std::vector<std::string> passed_on;  // options for the script, as given
  std::string assume_device;           // --assume-device, as given
  bool help = false;
};

Arguments parse(int argc, char** argv) {
  Arguments a;
  a.subcommand = argv[1];
  // The options the script reads are passed on to it as given.
  auto passed_on = [&](const char* name, std::function<void(const std::string&)> keep) {
    return [&a, name, keep](const std::string& v) {
      a.passed_on.insert(a.passed_on.end(), {name, v});
      keep(v);
    };
  };
  OptionParser()
      .flag("-h,--help", [&] { a.help = true; })
      .value("-o,--output", passed_on("--output", [&](const std::string& v) { a.output = v; }))
      .value("--assume-device", passed_on("--assume-device", [&](const std::string& v) { a.assume_device = v; }))
      .value("--link-GBps", passed_on("--link-GBps",
                                      [](const std::string& v) {
                                        char* end = nullptr;
                                        const double x = std::strtod(v.c_str(), &end);
                                        if (*end != '\0' || !(x > 0) || x > 1e9)
                                          throw UsageError("--link-GBps: '" + v + "' is not a positive number of GB/s");
                                      }))
      .operands([&](const std::string& arg) {
        if (a.subcommand == "advise" && !fs::is_directory(arg) &&
            (fs::exists(arg) || fs::path(arg).extension() == ".yaml" || fs::path(arg).extension() == ".yml")) {
          // A deck to run first (a missing .yaml is reported by the deck loader, with the others).
          if (!a.deck.empty()) throw UsageError("only one deck is accepted; got '" + a.deck + "' and '" + arg + "'");
          a.deck = arg;
        } else {
          a.directories.push_back(arg);
        }
      })
      .parse(argc, argv, 2);
  if (!a.deck.empty() && !a.directories.empty())
    throw UsageError("give a deck to run or results directories to read, not both");
  if (!a.help && a.directories.empty() && a.subcommand == "report") throw UsageError("no results directory given");
  return a;
}

// `miniapp advise [DECK]`: runs the deck (or the built-in sweep) with this binary into `out`, its
// tables into out/tables.txt, progress on stderr. Returns the run's exit code; a SIGTERM or SIGINT
// to this process is passed on to the run, which saves what finished (128+N).
int run_sweep(const std::string& program, const std::string& deck, const fs::path& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw RuntimeProblem("cannot create " + out.string() + ": " + ec.message());
  std::string deck_path = deck;
  if (deck.empty()) {
    deck_path = (out / "advise.yaml").string();
    write_atomically(deck_path, kBuiltInAdviseDeck);
  }
  const std::string tables = (out / "tables.txt").string();
  std::cerr << "miniapp advise: running " << (deck.empty() ? "the built-in sweep (" + deck_path + ")" : deck)
            << " into " << out.string() << "; tables in " << tables << "\n";
  std::cout.flush();
  forward_stop_signals();
  const std::optional<int> code = run_child("/proc/self/exe", {program, deck_path, "--output", out.string()}, [&] {
    const int fd = ::open(tables.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) _exit(exit_code::kRuntimeError);
  });
  return code ? *code : exit_code::kInterruptedBase + stop_signal_received();
}

std::vector<fs::path> result_files(const std::string& directory) {
  std::error_code ec;
  const fs::path dir(directory);
  if (!fs::exists(dir, ec)) throw BadInput(directory + ": no such directory");
  if (!fs::is_directory(dir, ec)) throw BadInput(directory + ": not a directory (give the directory that holds results.json)");
  std::vector<fs::path> files;
  bool compressed = false;  // kept as results.json.xz (scripts/compact_results.py, the committed GPU runs)
  for (const std::string& run : results::run_directories(directory)) {
    if (fs::is_regular_file(fs::path(run) / "results.json", ec)) files.push_back(fs::path(run) / "results.json");
    compressed = compressed || fs::is_regular_file(fs::path(run) / "results.json.xz", ec);
  }
  if (files.empty() && compressed)
    throw BadInput(directory + ": its results are kept compressed (results.json.xz): decompress them first "
                   "(xz -dk " + directory + "/results.json.xz, or threads-N/results.json.xz of a thread sweep)");
  if (files.empty()) throw BadInput(directory + ": no results.json in it (nor threads-N/results.json of a thread sweep)");
  return files;
}

// The checks that need no Python: valid JSON, our schema, some measurements.
void check_results_file(const fs::path& file) {
  YAML::Node doc;
  try {
    doc = results::load(file.string());
  } catch (const results::ReadError& e) {
    using Kind = results::ReadError::Kind;
    if (e.kind == Kind::NotJson)
      throw BadInput(file.string() + ": not valid JSON (line " + std::to_string(e.line) + ", column " +
                     std::to_string(e.column) + ": " + e.what() + ")");
    if (e.kind == Kind::NotObject)
      throw BadInput(file.string() + ": not a mini-app results file (the top level is not an object)");
    const std::string found = e.what();
    throw BadInput(file.string() + ": " + (found.empty() ? std::string("no schema field") : "schema '" + found + "'") +
                   "; expected '" + kResultsSchema + "' (a results.json written by miniapp)");
  }
  const YAML::Node measurements = results::child(doc, "measurements");
  if (!measurements.IsSequence() || measurements.size() == 0)
    throw BadInput(file.string() + ": holds no measurements (status '" + results::text(doc, "status", "?") +
                   "'); nothing to report");
}

fs::path executable_directory() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

// The script: MINIAPP_REPORT_SCRIPT, the installed share directory, the source tree it was built from.
fs::path find_script() {
  std::vector<fs::path> tried;
  if (const char* env = std::getenv("MINIAPP_REPORT_SCRIPT")) {
    if (fs::is_regular_file(env)) return env;
    throw RuntimeProblem(std::string("MINIAPP_REPORT_SCRIPT=") + env + " is not a file");
  }
  const fs::path exe_dir = executable_directory();
  if (!exe_dir.empty()) tried.push_back(exe_dir.parent_path() / "share" / "kokkos-miniapp" / "report" / "report.py");
  if (std::strlen(MINIAPP_SOURCE_DIR) > 0) tried.push_back(fs::path(MINIAPP_SOURCE_DIR) / "scripts" / "report" / "report.py");
  for (const fs::path& p : tried)
    if (fs::is_regular_file(p)) return p;
  std::string list;
  for (const fs::path& p : tried) list += (list.empty() ? "" : ", ") + p.string();
  throw RuntimeProblem("cannot find the report script (tried " + list + "); set MINIAPP_REPORT_SCRIPT");
}

// Runs `python -c code`, its output discarded; true when it exits 0.
bool probe(const std::string& python, const char* code) {
  return run_process({python, "-c", code}, true).exit_code == 0;
}

std::vector<std::string> python_candidates() {
  if (const char* env = std::getenv("MINIAPP_PYTHON")) return {env};
  std::vector<std::string> out;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (!dir.empty() && access((fs::path(dir) / "python3").c_str(), X_OK) == 0) {
        out.push_back((fs::path(dir) / "python3").string());
        break;
      }
  }
  // Debian's interpreter, where python3-matplotlib installs, even when another python3 comes first.
  if (access("/usr/bin/python3", X_OK) == 0 && std::find(out.begin(), out.end(), "/usr/bin/python3") == out.end())
    out.push_back("/usr/bin/python3");
  return out;
}

std::string find_python(bool needs_matplotlib) {
  const std::vector<std::string> candidates = python_candidates();
  std::string tried;
  for (const std::string& python : candidates) {
    tried += (tried.empty() ? "" : ", ") + python;
    if (probe(python, needs_matplotlib ? "import matplotlib" : "import json")) return python;
  }
  const std::string how = " (Debian: apt-get install python3-matplotlib, or scripts/bootstrap-debian.sh --report-packages; "
                          "MINIAPP_PYTHON=/path/to/python3 picks another interpreter)";
  if (candidates.empty()) throw RuntimeProblem("no python3 found on PATH or in /usr/bin" + how);
  if (needs_matplotlib) throw RuntimeProblem("no python3 with matplotlib: tried " + tried + how);
  throw RuntimeProblem("python3 does not run: tried " + tried + how);
}

// `miniapp advise DECK --assume-device X`: X is checked by the script before the sweep runs, so a
// value it would refuse costs no sweep. Its figures go to stderr with the progress. Throws
// BadInput with the script's message on stderr already.
void check_assumed_device(const std::string& value) {
  const fs::path script = find_script();
  const std::string python = find_python(false);
  const std::optional<int> code = run_child(python, {python, script.string(), "device", value}, [] {
    if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) _exit(exit_code::kRuntimeError);
  });
  if (!code) throw RuntimeProblem("stopped by a signal before the sweep started");
  if (*code == exit_code::kBadInput) throw BadInput("--assume-device " + value + " refused (above); nothing was run");
  if (*code != 0) throw RuntimeProblem("checking --assume-device " + value + " failed with exit code " + std::to_string(*code));
}

}  // namespace

int run_report_subcommand(int argc, char** argv) {
  const std::string name = argv[1];
  Arguments args;
  try {
    args = parse(argc, argv);
    if (args.help) {
      std::cout << (name == "report" ? kReportUsage : kAdviseUsage);
      return exit_code::kAllVerified;
    }
    if (name == "advise" && args.directories.empty()) {
      // Run first: the deck given, or the built-in sweep.
      const fs::path out = !args.output.empty() ? fs::path(args.output)
                           : fs::path("results") / ("advise-" + (args.deck.empty() ? std::string("sweep")
                                                                                    : fs::path(args.deck).stem().string()) +
                                                    "-" + local_timestamp());
      int code = exit_code::kRuntimeError;
      try {
        if (!args.assume_device.empty()) check_assumed_device(args.assume_device);
        code = run_sweep(argv[0], args.deck, out);
      } catch (const BadInput&) {
        throw;
      } catch (const std::exception& e) {
        std::cerr << "miniapp advise: " << e.what() << "\n";
        return exit_code::kRuntimeError;
      }
      if (code != exit_code::kAllVerified) {
        std::cerr << "miniapp advise: the sweep ended with exit code " << code
                  << (code == exit_code::kVerificationFailed ? " (a verification failed)"
                      : code == exit_code::kBadInput        ? " (bad deck)"
                      : code > exit_code::kInterruptedBase  ? " (stopped by a signal; finished results kept in " + out.string() + ")"
                                                            : "")
                  << "; no advice from incomplete or wrong results\n";
        return code;
      }
      args.directories.push_back(out.string());
      if (args.output.empty()) {
        args.passed_on.push_back("--output");
        args.passed_on.push_back(out.string());
      }
    }
    for (const std::string& d : args.directories)
      for (const fs::path& f : result_files(d)) check_results_file(f);
  } catch (const UsageError& e) {
    return usage_error("miniapp " + name, e);
  } catch (const BadInput& e) {
    std::cerr << "miniapp " << name << ": " << e.what() << "\n";
    return exit_code::kBadInput;
  }
  try {
    const fs::path script = find_script();
    const std::string python = find_python(name == "report");
    std::vector<std::string> command = {python, script.string(), name};
    command.insert(command.end(), args.passed_on.begin(), args.passed_on.end());
    command.push_back("--");
    command.insert(command.end(), args.directories.begin(), args.directories.end());
    throw RuntimeProblem(replace_process(python, command));
  } catch (const RuntimeProblem& e) {
    std::cerr << "miniapp " << name << ": " << e.what() << "\n";
    return exit_code::kRuntimeError;
  }
}

}  // namespace miniapp
