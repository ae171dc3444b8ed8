#pragma once
// Which GPU this process uses and how it was chosen (command line, KOKKOS_DEVICE_ID, the local
// rank from Slurm, or the first visible device), for the provenance of every run.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace miniapp {

struct GpuInfo {
  std::string space;        // cuda | hip
  int device_id = -1;       // runtime index, among the visible devices
  std::string name;
  std::string pci_bus_id;
  std::size_t total_memory = 0;
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES, or "all"
  std::string selected_by;
};

// Call after Kokkos is initialized; nothing when no GPU backend is compiled in.
std::optional<GpuInfo> gpu_in_use(const std::vector<std::string>& command_line);

// How the device was chosen, from the command line and environment alone (testable anywhere).
std::string device_selection(const std::vector<std::string>& command_line);

}  // namespace miniapp
