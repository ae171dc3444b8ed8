// `miniapp [options] DECK.yaml`: runs the experiments of a deck on every requested Kokkos
// execution space and mirror policy, verifies every result and writes the run's record.

#include "miniapp/calibration/calibration.hpp"
#include "miniapp/commands/commands.hpp"
#include "miniapp/commands/run/command_line.hpp"
#include "miniapp/commands/run/runner.hpp"
#include "miniapp/commands/run/thread_sweep.hpp"
#include "miniapp/core/affinity.hpp"
#include "miniapp/core/atomic_file.hpp"
#include "miniapp/core/clock.hpp"
#include "miniapp/core/deck.hpp"
#include "miniapp/core/exit_codes.hpp"
#include "miniapp/core/interrupt.hpp"
#include "miniapp/core/kernel_times.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/memory.hpp"
#include "miniapp/core/ranks.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/workload.hpp"
#include "miniapp/record/console.hpp"
#include "miniapp/record/provenance.hpp"
#include "miniapp/record/writers.hpp"

#include <sched.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
namespace miniapp {

namespace {

std::string default_output_directory(const std::string& deck) {
  return "results/" + fs::path(deck).stem().string() + "-" + local_timestamp();
}

void warn_about_environment(const Deck& deck) {
  bool openmp = false;
  for (const CaseSpec& c : deck.cases)
    for (const std::string& s : c.spaces) openmp = openmp || s == "openmp";
  if (openmp && (!std::getenv("OMP_PROC_BIND") || !std::getenv("OMP_PLACES")))
    std::cerr << "warning: OMP_PROC_BIND/OMP_PLACES are not set; OpenMP threads may migrate between cores "
                 "(e.g. export OMP_PROC_BIND=spread OMP_PLACES=threads)\n";
}

// Host threads, in this order: --kokkos-threads/--kokkos-num-threads or KOKKOS_NUM_THREADS
// (Kokkos reads them itself), the deck's `threads`, OMP_NUM_THREADS, SLURM_CPUS_PER_TASK.
std::string choose_host_threads(const CommandLine& cli, const Deck& deck) {
  for (const std::string& a : cli.kokkos_args)
    if (a.rfind("--kokkos-threads", 0) == 0 || a.rfind("--kokkos-num-threads", 0) == 0) return "command line";
  if (std::getenv("KOKKOS_NUM_THREADS")) return "KOKKOS_NUM_THREADS";
  if (deck.threads.size() == 1) {
    setenv("KOKKOS_NUM_THREADS", std::to_string(deck.threads.front()).c_str(), 1);
    return "deck";
  }
  if (deck.threads.size() > 1) return "deck thread sweep";
  if (std::getenv("OMP_NUM_THREADS")) return "OMP_NUM_THREADS";
  if (const char* slurm = std::getenv("SLURM_CPUS_PER_TASK")) {
    setenv("KOKKOS_NUM_THREADS", slurm, 1);
    return "SLURM_CPUS_PER_TASK";
  }
  return "default";
}

int cpus_allowed() {
  const cpu_set_t set = process_cpus();
  return CPU_COUNT(&set);
}

// The CPUs of a list such as "0-3,8".
std::set<int> cpu_set_of(const std::string& list) {
  std::set<int> cpus;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    const std::size_t dash = item.find('-');
    try {
      const int first = std::stoi(item.substr(0, dash));
      const int last = dash == std::string::npos ? first : std::stoi(item.substr(dash + 1));
      for (int c = first; c <= last; ++c) cpus.insert(c);
    } catch (const std::exception&) {
    }
  }
  return cpus;
}

void warn_about_threads(const Provenance& p) {
  int limit = p.cpus_allowed;
  if (const char* slurm = std::getenv("SLURM_CPUS_PER_TASK")) limit = std::min(limit, std::atoi(slurm));
  if (limit > 0 && p.host_threads > limit)
    std::cerr << "warning: " << p.host_threads << " host threads (" << p.host_threads_source << ") but this job may use "
              << limit << " CPUs: the threads are oversubscribed and timings will suffer\n";
  // Ranks of one node that may use the same CPUs, while OpenMP pins each rank's threads from the
  // first CPU of its places: their threads all land on the same CPUs.
  const char* bind = std::getenv("OMP_PROC_BIND");
  if (p.ranks.size() < 2 || !bind || std::string(bind).empty() || std::string(bind) == "false") return;
  for (std::size_t a = 0; a < p.ranks.size(); ++a)
    for (std::size_t b = a + 1; b < p.ranks.size(); ++b) {
      if (p.ranks[a].hostname != p.ranks[b].hostname) continue;
      const std::set<int> first = cpu_set_of(p.ranks[a].cpus), second = cpu_set_of(p.ranks[b].cpus);
      if (first.empty() || second.empty() || *first.begin() != *second.begin()) continue;
      std::cerr << "warning: ranks " << p.ranks[a].rank << " and " << p.ranks[b].rank << " on " << p.ranks[a].hostname
                << " may use CPUs " << p.ranks[a].cpus << " and " << p.ranks[b].cpus << ", and OMP_PROC_BIND=" << bind
                << " pins each rank's first thread to the first of its CPUs, the same one: they wait for each other. "
                   "Give each rank its own CPUs (srun with a task binding, mpirun --bind-to core) or set "
                   "OMP_PROC_BIND=false\n";
      return;
    }
}

// Refuses, with the numbers, every measurement whose fields do not fit where they must live, and
// every one a workload knows it cannot run (a limit of the space, e.g. team scratch), before
// anything is allocated: a plan either runs whole or not at all.
std::vector<std::string> check_limits(const Deck& deck, const std::vector<MeasurementSpec>& plan) {
  std::vector<std::string> problems;
  const std::optional<std::size_t> host_free = available_host_memory();
  for (const MeasurementSpec& m : plan) {
    const Workload* w = find_workload(m.workload);
    const Footprint fp = w->footprint(m, deck.cases[m.case_index].params);
    // The space's bytes are host memory themselves or have host mirrors; host-only bytes add to them.
    const double need_host = static_cast<double>(fp.space_bytes + fp.host_only_bytes);
    const double need_space = static_cast<double>(fp.space_bytes);
    const CaseSpec& c = deck.cases[m.case_index];
    auto refuse = [&](const std::string& where, double need, double available) {
      std::ostringstream s;
      s << deck.file << ":" << c.line << ":1: " << "cases[" << m.case_index << "] (" << c.name << "): size " << m.size
        << " " << to_string(m.precision) << " on " << m.space << " needs " << format_bytes(need) << " of " << where
        << " memory, " << format_bytes(available) << " available";
      problems.push_back(s.str());
    };
    if (const std::optional<std::string> why = w->refuse(m, c.params)) {
      std::ostringstream s;
      s << deck.file << ":" << c.line << ":1: " << "cases[" << m.case_index << "] (" << c.name
        << "): " << describe_measurement(m) << ": " << *why;
      problems.push_back(s.str());
    }
    if (host_free && need_host > static_cast<double>(*host_free))
      refuse("host", need_host, static_cast<double>(*host_free));
    if (!is_host_space_name(m.space))
      if (const auto dev = available_device_memory(m.space); dev && need_space > static_cast<double>(*dev))
        refuse(m.space + " device", need_space, static_cast<double>(*dev));
  }
  std::sort(problems.begin(), problems.end());
  problems.erase(std::unique(problems.begin(), problems.end()), problems.end());
  return problems;
}

fs::path output_directory(const CommandLine& cli, const Deck& deck) {
  return !cli.output.empty()              ? fs::path(cli.output)
         : !deck.output_directory.empty() ? fs::path(deck.output_directory)
                                          : fs::path(default_output_directory(deck.file));
}

// Whether any rank refuses the plan (printing its problems): every rank checks its own memory,
// and all run the plan or none does. A collective.
bool over_limits_on_any_rank(const Deck& deck, const std::vector<MeasurementSpec>& plan) {
  const std::vector<std::string> problems = check_limits(deck, plan);
  const std::string on_rank = ranks::count() > 1 ? "rank " + std::to_string(ranks::rank()) + ": " : "";
  for (const std::string& p : problems) std::cerr << on_rank << p << "\n";
  if (!problems.empty())
    std::cerr << on_rank << problems.size() << " measurement(s) exceed a memory or space limit; nothing was run\n";
  return ranks::any(!problems.empty());
}

// --dry-run: the plan, with what each measurement allocates.
void print_plan(const Deck& deck, const std::vector<MeasurementSpec>& plan, const Provenance& provenance) {
  std::cout << "deck " << deck.file << ": " << deck.cases.size() << " case(s), " << plan.size() << " measurement(s), "
            << provenance.host_threads << " host threads (" << provenance.host_threads_source << ")";
  if (ranks::count() > 1) std::cout << ", split across " << ranks::count() << " MPI ranks";
  std::cout << "\n";
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const Workload* w = find_workload(plan[i].workload);
    const Footprint fp = w->footprint(plan[i], deck.cases[plan[i].case_index].params);
    std::cout << "  [" << i + 1 << "] " << describe_measurement(plan[i]) << "  ("
              << format_bytes(static_cast<double>(fp.space_bytes));
    if (fp.host_only_bytes > 0) std::cout << " + " << format_bytes(static_cast<double>(fp.host_only_bytes)) << " host only";
    std::cout << ")\n";
  }
}

// The calibration of the plan's spaces into the record, or why it was skipped; an exit code when
// the probe's own check failed and nothing may be measured.
std::optional<int> calibrate(const CommandLine& cli, const std::vector<MeasurementSpec>& plan, const fs::path& out_dir,
                             RunRecord& record) {
  if (!cli.calibrate) {
    record.calibration_skipped = "--no-calibrate";
    return std::nullopt;
  }
  if (ranks::count() > 1) {
    record.calibration_skipped = "not measured under MPI yet: " + std::to_string(ranks::count()) + " ranks";
    return std::nullopt;
  }
  std::vector<std::string> spaces;
  for (const std::string& s : compiled_space_names())
    if (std::any_of(plan.begin(), plan.end(), [&](const MeasurementSpec& m) { return m.space == s; }))
      spaces.push_back(s);
  const Provenance& p = record.provenance;
  const calibration::Key key{p.git_commit, p.hostname,   p.cpu_model, p.kokkos_version,
                             p.gpu ? p.gpu->pci_bus_id : "", p.host_threads, p.cpus_allowed};
  try {
    const calibration::CacheFiles files{(out_dir / "calibration.json").string(), calibration::default_machine_cache(key)};
    record.calibration =
        calibration::calibrate(spaces, key, files, cli.quiet ? nullptr : &std::cerr, std::nullopt, cli.recalibrate);
  } catch (const calibration::ProbeFailed& e) {
    std::cerr << "\nminiapp: calibration probe failed: " << e.what() << "; nothing was measured\n";
    return exit_code::kVerificationFailed;
  } catch (const Interrupted&) {
    // The signal stays pending: the run loop ends at once and writes the results as interrupted.
    record.calibration_skipped = "interrupted during the calibration probe";
  }
  return std::nullopt;
}

int run(const CommandLine& cli, const Deck& deck, Provenance provenance) {
  std::vector<MeasurementSpec> plan = expand(deck);
  for (MeasurementSpec& m : plan) m.ranks = ranks::count();
  const bool root = ranks::is_root();
  if (over_limits_on_any_rank(deck, plan)) return exit_code::kBadInput;
  if (const auto why = cli.kernel_times ? kernel_times::cannot_start() : std::nullopt) {
    if (root) std::cerr << "miniapp: " << *why << "; nothing was run\n";
    return exit_code::kBadInput;
  }
  if (cli.dry_run) {
    if (root) print_plan(deck, plan, provenance);
    return exit_code::kAllVerified;
  }

  // Rank 0 alone writes the results.
  const fs::path out_dir = output_directory(cli, deck);
  std::error_code unwritable;
  if (root) fs::create_directories(out_dir, unwritable);
  if (ranks::any(bool(unwritable))) {
    if (root) std::cerr << "miniapp: error: cannot create " << out_dir.string() << ": " << unwritable.message() << "\n";
    return exit_code::kRuntimeError;
  }
  const bool quiet = cli.quiet || !root;
  if (!quiet) warn_about_environment(deck);
  if (!quiet && provenance.gpu)
    std::cerr << "GPU: " << provenance.gpu->space << " device " << provenance.gpu->device_id << " ("
              << provenance.gpu->name << ", " << provenance.gpu->pci_bus_id << "), visible devices "
              << provenance.gpu->visible_devices << ", chosen by " << provenance.gpu->selected_by << "\n";

  RunRecord record;
  record.provenance = std::move(provenance);
  record.deck = &deck;
  auto save = [&](const RunRecord& r) {
    write_atomically((out_dir / "results.json").string(), to_json(r));
    if (deck.write_csv) write_atomically((out_dir / "results.csv").string(), to_csv(r));
    write_atomically((out_dir / "benchmark.json").string(), to_benchmark_json(r));
    if (r.kernels_fenced) write_atomically((out_dir / "kernel-times.json").string(), kernel_times::to_json(kernel_times::totals()));
  };
  if (const std::optional<int> stop = calibrate(cli, plan, out_dir, record)) return *stop;
  // After the calibration: its probe is never fenced kernel by kernel.
  if (cli.kernel_times) {
    kernel_times::start();
    record.kernels_fenced = true;
  }
  auto measure = [&](const MeasurementSpec& spec) {
    return find_workload(spec.workload)->run(spec, deck.cases[spec.case_index].params);
  };
  const int code = run_plan(plan, record, measure, save, cli.quiet);
  if (cli.kernel_times) {
    kernel_times::stop();
    if (!quiet) {
      std::cerr << "\nkernel times (Kokkos fenced after every kernel), the compute phases:\n";
      kernel_times::print_summary(std::cerr, kernel_times::totals(), "compute", 3);
      std::cerr << "every phase's kernels: " << (out_dir / "kernel-times.json").string() << "\n";
    }
  }
  if (!quiet) std::cout << "\nresults: " << (out_dir / "results.json").string() << "\n";
  return code;
}

// A deck with several thread counts: one process per count, each into threads-<N>/.
int start_thread_sweep(const CommandLine& cli, const Deck& deck, int argc, char** argv) {
  const fs::path out_dir = output_directory(cli, deck);
  std::error_code error;
  fs::create_directories(out_dir, error);
  if (error) {
    std::cerr << "miniapp: error: cannot create " << out_dir.string() << ": " << error.message() << "\n";
    return exit_code::kRuntimeError;
  }
  return run_thread_sweep(deck.threads, std::vector<std::string>(argv, argv + argc), out_dir.string(), cli.quiet);
}

// Kokkos started with the --kokkos-* arguments only (so its own --help handling never fires),
// where this process runs recorded, then the run.
int run_in_kokkos(const CommandLine& cli, const Deck& deck, const std::string& threads_source, int argc, char** argv) {
  std::vector<std::string> kokkos_args = ranks::kokkos_arguments(cli.kokkos_args);
  std::vector<char*> kokkos_argv = {argv[0]};
  for (std::string& a : kokkos_args) kokkos_argv.push_back(a.data());
  int kokkos_argc = static_cast<int>(kokkos_argv.size());
  kokkos_argv.push_back(nullptr);
  const int allowed = cpus_allowed();
  try {
    Kokkos::ScopeGuard guard(kokkos_argc, kokkos_argv.data());
    Provenance provenance = collect_provenance(argc, argv);
    provenance.host_threads = static_cast<int>(Kokkos::DefaultHostExecutionSpace().concurrency());
    provenance.host_threads_source = threads_source;
    provenance.cpus_allowed = allowed;
    provenance.launcher = ranks::launcher();
    provenance.ranks = gather_rank_places(this_rank_place(provenance));
    if (!cli.quiet && ranks::is_root()) warn_about_threads(provenance);
    return run(cli, deck, std::move(provenance));
  } catch (const std::exception& e) {
    std::cerr << "miniapp: error: " << e.what() << "\n";
    // Another rank may be waiting in a collective this one will never reach.
    if (ranks::count() > 1) ranks::abort(exit_code::kRuntimeError);
    return exit_code::kRuntimeError;
  }
}

}  // namespace

int run_deck_command(int argc, char** argv) {
  CommandLine cli;
  try {
    cli = parse_command_line(argc, argv);
  } catch (const UsageError& e) {
    return usage_error("miniapp", e);
  }
  if (cli.help) {
    std::cout << kRunUsage;
    return exit_code::kAllVerified;
  }
  if (cli.version) {
    print_version(std::cout);
    return exit_code::kAllVerified;
  }
  if (cli.list) {
    print_list(std::cout);
    return exit_code::kAllVerified;
  }

  // Under an MPI launcher this process is one rank of the run (core/ranks.hpp); MPI starts
  // before Kokkos and ends after it. Every rank reads the same deck, so all agree on what follows.
  std::optional<ranks::Session> mpi;
  try {
    mpi.emplace(&argc, &argv);
  } catch (const std::exception& e) {
    std::cerr << "miniapp: error: " << e.what() << "\n";
    return exit_code::kRuntimeError;
  }
  const bool root = ranks::is_root();

  // The deck is validated before Kokkos starts: a bad deck costs no device initialization.
  DeckResult loaded = load_deck_file(cli.deck, cli.overrides);
  if (!loaded.deck) {
    if (!root) return exit_code::kBadInput;
    for (const Diagnostic& d : loaded.diagnostics.all()) std::cerr << format(d) << "\n";
    std::cerr << loaded.diagnostics.all().size() << " problem(s) in " << cli.deck << "; nothing was run\n";
    return exit_code::kBadInput;
  }
  if (!cli.case_selector.empty())
    if (const auto problem = select_case(*loaded.deck, cli.case_selector)) {
      if (root) std::cerr << "miniapp: " << *problem << "; nothing was run\n";
      return exit_code::kBadInput;
    }
  // From here on a signal is remembered and ends the run with its finished results saved; a file
  // size limit (ulimit -f) makes a write fail with an error instead of killing the process.
  install_interrupt_handlers();
  std::signal(SIGXFSZ, SIG_IGN);
  const std::string threads_source = choose_host_threads(cli, *loaded.deck);
  if (threads_source == "deck thread sweep" && ranks::count() > 1) {
    if (root)
      std::cerr << "miniapp: a thread sweep starts one process per thread count and cannot run as MPI ranks; "
                   "give the deck one thread count (threads: N, or --kokkos-num-threads=N) per run; nothing was run\n";
    return exit_code::kBadInput;
  }
  if (threads_source == "deck thread sweep") {
    std::cerr << "thread sweep over " << loaded.deck->threads.size() << " host thread counts: one run each\n";
    if (!cli.dry_run) return start_thread_sweep(cli, *loaded.deck, argc, argv);
  }
  return run_in_kokkos(cli, *loaded.deck, threads_source, argc, argv);
}

}  // namespace miniapp
