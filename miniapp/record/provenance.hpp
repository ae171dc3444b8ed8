#pragma once
// Where, on what and as what a run ran: build, Kokkos, host, GPU, environment, Slurm.

#include "miniapp/core/device_info.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace miniapp {

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
  std::optional<GpuInfo> gpu;     // the GPU in use and how it was chosen, where one is compiled in
};

Provenance collect_provenance(int argc, char** argv);

}  // namespace miniapp
