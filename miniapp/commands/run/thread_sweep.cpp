#include "miniapp/commands/run/thread_sweep.hpp"

#include "miniapp/core/affinity.hpp"
#include "miniapp/core/child_process.hpp"
#include "miniapp/core/exit_codes.hpp"
#include "miniapp/core/atomic_file.hpp"
#include "miniapp/core/stats.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace miniapp {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) out.push_back(field);
  return out;
}

struct SweepRun {
  int threads = 0;
  fs::path directory;
  int exit_code = 0;
};

void write_summary(const fs::path& out_dir, const std::vector<SweepRun>& runs) {
  std::ostringstream csv;
  bool header = false;
  for (const SweepRun& r : runs) {
    std::ifstream in(r.directory / "results.csv");
    std::string line;
    if (!std::getline(in, line)) continue;
    if (!header) csv << "host_threads," << line << "\n";
    header = true;
    while (std::getline(in, line)) csv << r.threads << "," << line << "\n";
  }
  write_atomically((out_dir / "threads-summary.csv").string(), csv.str());
}

void print_comparison(std::ostream& os, const std::vector<SweepRun>& runs) {
  std::vector<std::map<std::string, double>> medians;
  try {
    for (const SweepRun& r : runs) medians.push_back(median_totals((r.directory / "results.csv").string()));
  } catch (const std::exception& e) {
    os << "thread sweep: no comparison: " << e.what() << "\n";
    return;
  }
  if (medians.empty()) return;
  os << "\n== thread sweep: median total ms per iteration (speedup over " << runs.front().threads
     << " thread(s)) ==\n";
  os << std::left << std::setw(60) << "measurement" << std::right;
  for (const SweepRun& r : runs) os << std::setw(18) << (std::to_string(r.threads) + " thread(s)");
  os << "\n";
  for (const auto& [key, first] : medians.front()) {
    os << std::left << std::setw(60) << key << std::right;
    for (const auto& m : medians) {
      const auto it = m.find(key);
      std::ostringstream cell;
      if (it == m.end()) cell << "-";
      else cell << std::fixed << std::setprecision(3) << it->second * 1e3 << " (" << std::setprecision(2)
                << (it->second > 0 ? first / it->second : 0.0) << "x)";
      os << std::setw(18) << cell.str();
    }
    os << "\n";
  }
}

}  // namespace

// Columns are found by their header names, so a column added to results.csv changes nothing here.
std::map<std::string, double> median_totals(const std::string& csv) {
  std::ifstream in(csv);
  std::string line;
  if (!std::getline(in, line)) return {};
  const std::vector<std::string> header = split_csv_line(line);
  auto column = [&](const std::string& name) -> std::size_t {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw std::runtime_error(csv + " has no column '" + name + "'");
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t case_name = column("case"), variant = column("variant"), precision = column("precision"),
                    size = column("size"), space = column("space"), policy = column("policy"),
                    generate = column("generate"), total = column("total_s");
  std::map<std::string, std::vector<double>> samples;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split_csv_line(line);
    if (f.size() < header.size()) continue;
    const std::string key = f[case_name] + " " + f[variant] + " " + f[precision] + " size " + f[size] + " " +
                            f[space] + "/" + f[policy] + (f[generate] == "device" ? " generated on device" : "");
    samples[key].push_back(std::atof(f[total].c_str()));
  }
  std::map<std::string, double> medians;
  for (const auto& [key, values] : samples) medians[key] = summarize(values).median;
  return medians;
}

std::vector<std::string> sweep_run_arguments(const std::vector<std::string>& args, const std::string& run_dir) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-o" || a == "--output") {
      ++i;  // and its value
      continue;
    }
    if (a.rfind("-o=", 0) == 0 || a.rfind("--output=", 0) == 0) continue;
    out.push_back(a);
  }
  out.push_back("--output=" + run_dir);
  return out;
}

int run_thread_sweep(const std::vector<int>& counts, const std::vector<std::string>& args, const std::string& out_dir,
                     bool quiet, const std::string& executable) {
  std::vector<SweepRun> runs;
  int code = exit_code::kAllVerified;
  // A signal is passed on to the run in progress, which saves its finished measurements and
  // stops, and remembered, so that no further run starts, also when it arrives between two runs.
  forward_stop_signals();
  // Each run gets every CPU of the job: a child inherits this thread's mask, which the OpenMP
  // runtime has pinned to one CPU when OMP_PROC_BIND is set.
  const cpu_set_t job_cpus = process_cpus();

  for (std::size_t k = 0; k < counts.size(); ++k) {
    SweepRun run{counts[k], fs::path(out_dir) / ("threads-" + std::to_string(counts[k])), 0};
    auto stopped_before = [&] {
      std::cerr << "thread sweep stopped by signal " << stop_signal_received() << " before the run with "
                << run.threads << " threads; finished runs are kept\n";
      return exit_code::kInterruptedBase + stop_signal_received();
    };
    if (stop_signal_received() != 0) return stopped_before();
    if (!quiet)
      std::cerr << "== thread sweep " << k + 1 << " of " << counts.size() << ": " << run.threads
                << " host thread(s), results in " << run.directory.string() << "\n";
    std::optional<int> ended;
    try {
      ended = run_child(executable, sweep_run_arguments(args, run.directory.string()), [&] {
        if (CPU_COUNT(&job_cpus) > 0) sched_setaffinity(0, sizeof job_cpus, &job_cpus);
        ::setenv("KOKKOS_NUM_THREADS", std::to_string(run.threads).c_str(), 1);
      });
    } catch (const std::runtime_error&) {
      std::cerr << "miniapp: error: cannot start the run with " << run.threads << " threads\n";
      return exit_code::kRuntimeError;
    }
    if (!ended) return stopped_before();
    run.exit_code = *ended;
    runs.push_back(run);
    try {
      write_summary(out_dir, runs);
    } catch (const std::exception& e) {
      std::cerr << "miniapp: error: " << e.what() << "\n";
      return exit_code::kRuntimeError;
    }
    const int signal = stop_signal_received();
    if (run.exit_code >= exit_code::kInterruptedBase || signal != 0) {
      const int stop = run.exit_code >= exit_code::kInterruptedBase ? run.exit_code
                                                                   : exit_code::kInterruptedBase + signal;
      std::cerr << "thread sweep stopped: the run with " << run.threads << " threads ended with exit code "
                << run.exit_code << (signal != 0 ? " and the sweep received signal " + std::to_string(signal) : "")
                << "; finished runs are kept\n";
      return stop;
    }
    code = std::max(code, run.exit_code);
  }
  if (!quiet) print_comparison(std::cout, runs);
  if (!quiet) std::cout << "\nthread sweep summary: " << (fs::path(out_dir) / "threads-summary.csv").string() << "\n";
  return code;
}

}  // namespace miniapp
