#pragma once
// How much memory a space can still give, so a case that cannot fit is refused with numbers
// before anything is allocated.

#include <cstddef>
#include <optional>
#include <string>

namespace miniapp {

// Bytes the OS reports available to new allocations (MemAvailable), if known.
std::optional<std::size_t> available_host_memory();

// Free bytes on the device behind the named space (cuda, hip); nullopt for host spaces or when
// the runtime cannot tell. Needs Kokkos initialized, so the device Kokkos chose is the one asked.
std::optional<std::size_t> available_device_memory(const std::string& space);

std::string format_bytes(double bytes);

}  // namespace miniapp
