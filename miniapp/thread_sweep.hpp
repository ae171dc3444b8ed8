#pragma once
// A deck with a list of host thread counts runs this binary once per count, each in its own
// process (Kokkos fixes its thread pool at initialization), with results in threads-<N>/ and a
// combined threads-summary.csv. Answers "how many CPU cores match one GPU" (seed 001).

#include <string>
#include <vector>

namespace miniapp {

// args is argv; each run gets it without its output option plus --output=DIR/threads-N, and
// KOKKOS_NUM_THREADS=N in its environment.
// Returns the exit code of the sweep: the first signal exit, else the worst of the runs.
int run_thread_sweep(const std::vector<int>& counts, const std::vector<std::string>& args, const std::string& out_dir,
                     bool quiet);

// The arguments for one run of the sweep.
std::vector<std::string> sweep_run_arguments(const std::vector<std::string>& args, const std::string& run_dir);

}  // namespace miniapp
