#include "miniapp/core/memory.hpp"

#include "miniapp/core/kokkos_compat.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime_api.h>
#endif

namespace miniapp {

std::optional<std::size_t> available_host_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

std::optional<std::size_t> available_device_memory(const std::string& space) {
  std::size_t free_bytes = 0, total_bytes = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (space == "cuda" && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) return free_bytes;
#endif
#if defined(KOKKOS_ENABLE_HIP)
  if (space == "hip" && hipMemGetInfo(&free_bytes, &total_bytes) == hipSuccess) return free_bytes;
#endif
  (void)space;
  (void)free_bytes;
  (void)total_bytes;
  return std::nullopt;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

}  // namespace miniapp
