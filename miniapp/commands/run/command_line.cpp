#include "miniapp/commands/run/command_line.hpp"

#include "miniapp/core/diagnostics.hpp"
#include "miniapp/core/options.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/workload.hpp"
#include "miniapp/record/provenance.hpp"

#include <algorithm>
#include <ostream>

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

Under MPI (mpirun -np N miniapp DECK.yaml, or srun) each rank computes its own part of every
measurement (the workloads --list marks as split), each phase is timed as the slowest rank's,
every rank verifies its part, and rank 0 writes the results, with where each rank ran.

options:
  -h, --help          show this help and exit
      --version       show version, git commit, compiler, Kokkos versions and spaces
      --list          list workloads, variants, compiled spaces and mirror policies
      --dry-run       validate the deck and print the plan; run nothing
  -o, --output DIR    output directory (default: deck's output, else results/<deck>-<time>)
      --spaces LIST   comma-separated spaces for every case, e.g. serial,openmp
      --sizes LIST    comma-separated sizes for every case, e.g. 256,512
      --case LIST     run only these cases of the deck: comma-separated indexes (from 0),
                      names, or name prefixes ending in '*' (--case 'ranks-2-*')
      --no-calibrate  skip the calibration probe. On by default: a few seconds per space, it
                      measures each space's stream bandwidth, GEMM rate, launch latency and
                      host<->device link, and every measurement is placed under those roofs.
                      Kept in OUT/calibration.json and reused by later runs into OUT; also kept
                      for 24 hours per host, build and thread count in $MINIAPP_CALIBRATION_CACHE
                      (default ~/.cache/kokkos-miniapp), so short runs on one machine probe once
      --recalibrate   probe again even where a cached calibration exists
      --kernel-times  time every Kokkos kernel and deep copy of every phase (Kokkos fences after
                      each; no Kokkos Tools library needed) into OUT/kernel-times.json, and print
                      each compute phase's largest kernels. Phases that launch many kernels run
                      slower so: results.json says kernels_fenced, compare such runs with each other
  -q, --quiet         no progress on stderr, no tables on stdout
  --kokkos-...        passed to Kokkos (e.g. --kokkos-num-threads=2; see --kokkos-help)

exit codes:
  0  every measurement ran and verified
  1  a verification failed (a calibration probe's own check included)
  2  bad deck or command line (nothing ran)
  3  runtime error (allocation failure, device error, unwritable output)
  128+N  stopped by signal N (SIGTERM: 143); finished results are kept
)";

CommandLine parse_command_line(int argc, char** argv) {
  CommandLine cli;
  OptionParser()
      .flag("-h,--help", [&] { cli.help = true; })
      .flag("--version", [&] { cli.version = true; })
      .flag("--list", [&] { cli.list = true; })
      .flag("--dry-run", [&] { cli.dry_run = true; })
      .flag("-q,--quiet", [&] { cli.quiet = true; })
      .flag("--no-calibrate", [&] { cli.calibrate = false; })
      .flag("--recalibrate", [&] { cli.recalibrate = true; })
      .flag("--kernel-times", [&] { cli.kernel_times = true; })
      .value("-o,--output", [&](const std::string& v) { cli.output = v; })
      .value("--case", [&](const std::string& v) { cli.case_selector = v; })
      .value("--spaces", [&](const std::string& v) { cli.overrides.spaces = split_list(v); })
      .value("--sizes",
             [&](const std::string& v) {
               std::vector<std::size_t> sizes;
               for (const std::string& s : split_list(v))
                 sizes.push_back(static_cast<std::size_t>(parse_whole_number("--sizes", s, 1, long(1) << 40)));
               if (sizes.empty()) throw UsageError("--sizes needs at least one size");
               cli.overrides.sizes = sizes;
             })
      .prefixed("--kokkos-", [&](const std::string& a) { cli.kokkos_args.push_back(a); })
      .operands([&](const std::string& a) {
        if (!cli.deck.empty()) throw UsageError("only one deck is accepted; got '" + cli.deck + "' and '" + a + "'");
        cli.deck = a;
      })
      .parse(argc, argv);
  if (cli.overrides.spaces) {
    const auto compiled = compiled_space_names();
    for (const std::string& s : *cli.overrides.spaces)
      if (std::find(compiled.begin(), compiled.end(), s) == compiled.end()) {
        throw UsageError("--spaces: '" + s + "' is not compiled into this binary (compiled: " + join(compiled) + ")");
      }
  }
  if (!cli.help && !cli.version && !cli.list && cli.deck.empty()) throw UsageError("no deck given");
  return cli;
}

void print_version(std::ostream& os) {
  const Provenance p = collect_provenance(0, nullptr);
  os << "miniapp " << p.miniapp_version << " (git " << p.git_commit << ")\n"
     << "compiler: " << p.compiler << "\n"
     << "Kokkos " << p.kokkos_version << ", Kokkos Kernels " << p.kokkos_kernels_version << "\n"
     << "execution spaces:";
  for (const std::string& s : p.spaces_compiled) os << ' ' << s;
  os << '\n';
}

void print_list(std::ostream& os) {
  os << "workloads (size meaning; variants):\n";
  for (const auto& w : workloads()) {
    os << "  " << w->name() << ": " << w->summary() << "\n    size: " << w->size_meaning() << "\n";
    os << "    MPI: " << (w->splits_across_ranks() ? "split across ranks" : "one rank only (not split across ranks)");
    if (w->splits_across_ranks() && !w->ranks_split().empty()) os << ": " << w->ranks_split();
    os << "\n";
    for (const VariantInfo& v : w->variants()) {
      os << "    - " << v.name << ": " << v.summary;
      if (!v.unavailable_reason.empty()) os << " [unavailable: " << v.unavailable_reason << "]";
      os << "\n";
    }
  }
  os << "execution spaces compiled in:\n";
  for (const std::string& s : compiled_space_names())
    os << "  " << s << (is_host_space_name(s) ? " (host)" : " (device)") << "\n";
  os << "mirror policies:\n";
  for (MirrorPolicy p : kAllMirrorPolicies) os << "  " << to_string(p) << ": " << describe(p) << "\n";
}

}  // namespace miniapp
