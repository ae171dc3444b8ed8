#pragma once
// A deck with a list of host thread counts runs this binary once per count, each in its own
// process (Kokkos fixes its thread pool at initialization), with results in threads-<N>/ and a
// combined threads-summary.csv. Answers "how many CPU cores match one GPU" (seed 001).

#include <map>
#include <string>
#include <vector>

namespace miniapp {

// args is argv; each run gets it without its output option plus --output=DIR/threads-N, and
// KOKKOS_NUM_THREADS=N in its environment.
// Returns the exit code of the sweep: 128+N when a run or the sweep itself got signal N (no run
// starts after one), else the worst of the runs. executable is what each run executes.
int run_thread_sweep(const std::vector<int>& counts, const std::vector<std::string>& args, const std::string& out_dir,
                     bool quiet, const std::string& executable = "/proc/self/exe");

// Median total seconds per measurement of one run's results.csv, keyed by everything but the
// repetition ("case variant precision size N space/policy").
std::map<std::string, double> median_totals(const std::string& csv_path);

// The arguments for one run of the sweep.
std::vector<std::string> sweep_run_arguments(const std::vector<std::string>& args, const std::string& run_dir);

}  // namespace miniapp
