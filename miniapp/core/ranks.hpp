#pragma once
// The processes of one run: the ranks of an MPI job (mpirun, srun), or this process alone.
//
// MPI is optional at build time (MINIAPP_WITH_MPI, cmake/MiniappDependencies.cmake) and started
// only when a launcher started this process: a plain `miniapp deck.yaml` never initializes MPI
// (no singleton start-up, no runtime of its own), and behaves exactly as a build without MPI.
// Every function here works in both cases; with one rank the collectives return their input.
//
// The collectives must be reached by every rank in the same order: the run loop
// (commands/run/runner.cpp) calls them only between measurements, never from inside a kernel.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace miniapp::ranks {

// This rank's part of a problem: rank `rank` of `count`.
struct Slice {
  int rank = 0;
  int count = 1;
  // The contiguous part [begin, end) of `items` this rank owns: the first items % count ranks
  // own one more, so rank r's items follow rank r - 1's and together they cover all items.
  std::pair<std::size_t, std::size_t> range(std::size_t items) const;
  // How many of `items` this rank owns: the length of range(items).
  std::size_t part(std::size_t items) const {
    const auto [begin, end] = range(items);
    return end - begin;
  }
  // The most items any of `count` ranks owns (rank 0's part): what a memory check plans for.
  static std::size_t largest_part(std::size_t items, int count) { return Slice{0, count}.part(items); }
};

// Whether this binary was built with MPI.
bool compiled();

// Starts MPI (thread level "funneled": only the main thread calls it) when compiled in and a
// launcher started this process; ends it when destroyed. One per process, before Kokkos starts.
class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

// The launcher's name ("mpirun", "srun", ...) when this process is one rank of a job it started,
// empty otherwise (also before a Session, and in a build without MPI).
std::string launcher();

int rank();
int count();
inline Slice this_slice() { return {rank(), count()}; }
inline bool is_root() { return rank() == 0; }
// This rank's index among the ranks on its node, as the launcher numbers them (0 alone).
int local_rank();

// Collectives over every rank.
bool any(bool value);
int max(int value);
void max_in_place(std::vector<double>& values);
void min_in_place(std::vector<double>& values);
void sum_in_place(std::vector<double>& values);
// The same on `count` values in place (a workload's partial sums, in its own precision).
void sum_in_place(float* values, std::size_t count);
void sum_in_place(double* values, std::size_t count);
// Rank 0 gets every rank's text, in rank order; the other ranks get nothing.
std::vector<std::string> gather(const std::string& text);
// Every rank gets `root`'s text.
std::string broadcast(const std::string& text, int root);

// Whether the user chose the device Kokkos uses: a --kokkos-* argument or a KOKKOS_* variable
// naming a device id, a device count or a mapping (every version's spelling).
bool chooses_device(const std::vector<std::string>& kokkos_args);
// The --kokkos-* arguments Kokkos starts with on this rank: the user's, and under MPI, unless the
// user chose a device, the one that gives each rank of a node its own device
// (compat::device_by_local_rank_argument; none without a device backend).
std::vector<std::string> kokkos_arguments(std::vector<std::string> kokkos_args);

// Ends every rank at once with `code` (a collective can no longer be trusted to complete).
[[noreturn]] void abort(int code);

}  // namespace miniapp::ranks
