#include "thread_sweep.hpp"

#include "miniapp/core/exit_codes.hpp"
#include "miniapp/core/report.hpp"
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

namespace miniapp {

namespace fs = std::filesystem;

namespace {

volatile sig_atomic_t g_child = 0;

// Slurm signals every process of the step, but `kill <pid>` reaches only this one: pass it on so
// the run in progress saves its finished measurements and stops.
extern "C" void forward_signal(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

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

// Median total seconds per measurement, keyed by everything but the repetition.
std::map<std::string, double> median_totals(const fs::path& csv) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  std::map<std::string, std::vector<double>> samples;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split_csv_line(line);
    if (f.size() < 13) continue;
    const std::string key = f[0] + " " + f[2] + " " + f[3] + " size " + f[4] + " " + f[5] + "/" + f[6] +
                            (f[7] == "device" ? " generated on device" : "");
    samples[key].push_back(std::atof(f[12].c_str()));
  }
  std::map<std::string, double> medians;
  for (const auto& [key, values] : samples) medians[key] = summarize(values).median;
  return medians;
}

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
  for (const SweepRun& r : runs) medians.push_back(median_totals(r.directory / "results.csv"));
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
                     bool quiet) {
  std::vector<SweepRun> runs;
  int code = exit_code::kAllVerified;
  struct sigaction action {};
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  for (std::size_t k = 0; k < counts.size(); ++k) {
    SweepRun run{counts[k], fs::path(out_dir) / ("threads-" + std::to_string(counts[k])), 0};
    if (!quiet)
      std::cerr << "== thread sweep " << k + 1 << " of " << counts.size() << ": " << run.threads
                << " host thread(s), results in " << run.directory.string() << "\n";
    std::vector<std::string> child_args = sweep_run_arguments(args, run.directory.string());
    std::vector<char*> argv;
    for (std::string& a : child_args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::cerr << "miniapp: error: cannot start the run with " << run.threads << " threads\n";
      return exit_code::kRuntimeError;
    }
    if (pid == 0) {
      ::setenv("KOKKOS_NUM_THREADS", std::to_string(run.threads).c_str(), 1);
      ::execv("/proc/self/exe", argv.data());
      ::execvp(argv[0], argv.data());
      _exit(exit_code::kRuntimeError);
    }
    g_child = pid;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    g_child = 0;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : exit_code::kInterruptedBase + WTERMSIG(status);
    runs.push_back(run);
    write_summary(out_dir, runs);
    if (run.exit_code >= exit_code::kInterruptedBase) {
      std::cerr << "thread sweep stopped: the run with " << run.threads << " threads ended with exit code "
                << run.exit_code << "; finished runs are kept\n";
      return run.exit_code;
    }
    code = std::max(code, run.exit_code);
  }
  if (!quiet) print_comparison(std::cout, runs);
  if (!quiet) std::cout << "\nthread sweep summary: " << (fs::path(out_dir) / "threads-summary.csv").string() << "\n";
  return code;
}

}  // namespace miniapp
