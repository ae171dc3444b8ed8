#include "miniapp/core/device_info.hpp"

#include "miniapp/core/kokkos_compat.hpp"

#include <cstdlib>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime_api.h>
#endif

namespace miniapp {

namespace {
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

[[maybe_unused]] std::string visible(const char* first, const char* second = nullptr) {
  std::string v = env(first);
  if (v.empty() && second) v = env(second);
  return v.empty() ? "all" : v;
}
}  // namespace

std::string device_selection(const std::vector<std::string>& command_line) {
  for (std::size_t i = 0; i < command_line.size(); ++i) {
    const std::string& a = command_line[i];
    for (const char* flag : {"--kokkos-device-id", "--device-id", "--kokkos-map-device-id-by"})
      if (starts_with(a, flag)) {
        const bool has_value = a.find('=') != std::string::npos || i + 1 >= command_line.size();
        return "command line " + (has_value ? a : a + " " + command_line[i + 1]);
      }
  }
  for (const char* var : {"KOKKOS_DEVICE_ID", "KOKKOS_MAP_DEVICE_ID_BY"})
    if (!env(var).empty()) return std::string("environment ") + var + "=" + env(var);
  if (!env("SLURM_LOCALID").empty())
    return "Kokkos' default: local rank SLURM_LOCALID=" + env("SLURM_LOCALID") +
           " where Kokkos maps ranks to devices, else the first visible device";
  return "Kokkos' default: the first visible device";
}

std::optional<GpuInfo> gpu_in_use(const std::vector<std::string>& command_line) {
  std::optional<GpuInfo> info;
#if defined(KOKKOS_ENABLE_CUDA)
  int id = -1;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&id) == cudaSuccess && cudaGetDeviceProperties(&prop, id) == cudaSuccess) {
    info = GpuInfo{};
    info->space = "cuda";
    info->device_id = id;
    info->name = prop.name;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, id) == cudaSuccess) info->pci_bus_id = bus;
    info->total_memory = prop.totalGlobalMem;
    info->visible_devices = visible("CUDA_VISIBLE_DEVICES");
  }
#elif defined(KOKKOS_ENABLE_HIP)
  int id = -1;
  hipDeviceProp_t prop{};
  if (hipGetDevice(&id) == hipSuccess && hipGetDeviceProperties(&prop, id) == hipSuccess) {
    info = GpuInfo{};
    info->space = "hip";
    info->device_id = id;
    info->name = prop.name;
    char bus[32] = {};
    if (hipDeviceGetPCIBusId(bus, sizeof bus, id) == hipSuccess) info->pci_bus_id = bus;
    info->total_memory = prop.totalGlobalMem;
    info->visible_devices = visible("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES");
  }
#endif
  if (info) info->selected_by = device_selection(command_line);
  return info;
}

}  // namespace miniapp
