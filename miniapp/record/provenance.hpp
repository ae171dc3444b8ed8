#pragma once
// Where, on what and as what a run ran: build, Kokkos, host, GPU, environment, Slurm.

#include "miniapp/core/device_info.hpp"

#include <sched.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace miniapp {

// Where one MPI rank ran (the one process of a run without MPI is rank 0 of 1).
struct RankPlace {
  int rank = 0, local_rank = 0;
  std::string hostname;
  std::string cpus;      // its affinity mask as a CPU list, e.g. "0-3,8"
  int host_threads = 0;  // concurrency of its default host execution space
  int gpu_device = -1;   // the device it uses, among its visible devices; -1 without a device space
  std::string visible_devices;
};

struct Provenance {
  std::vector<std::string> command_line;
  std::string miniapp_version, git_commit, compiler, kokkos_version, kokkos_kernels_version;
  std::string kokkos_configuration;  // Kokkos::print_configuration
  std::string hostname, cpu_model;
  std::vector<std::string> spaces_compiled;
  std::map<std::string, std::string> environment;  // OMP_*, KOKKOS_*, SLURM_*, *_VISIBLE_DEVICES
  int host_threads = 0;              // concurrency of the default host execution space
  std::string host_threads_source;   // command line, deck, SLURM_CPUS_PER_TASK, environment, default
  int cpus_allowed = 0;              // CPUs in this process's affinity mask
  std::string started, finished;  // ISO 8601, UTC
  std::optional<GpuInfo> gpu;     // the GPU in use and how it was chosen, where one is compiled in (rank 0's)
  std::string launcher;           // "mpirun", "srun", ...; empty when not started as MPI ranks
  std::vector<RankPlace> ranks;   // every rank, in rank order
};

// This process's place (its rank, host, CPUs, threads and GPU) in the provenance p describes.
RankPlace this_rank_place(const Provenance& p);

// Every rank's place, in rank order, on rank 0 (nothing elsewhere). A collective.
std::vector<RankPlace> gather_rank_places(const RankPlace& mine);

// A CPU set as a list of ranges, "0-3,8".
std::string cpu_list(const cpu_set_t& set);

Provenance collect_provenance(int argc, char** argv);

}  // namespace miniapp
