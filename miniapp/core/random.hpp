#pragma once
// Counter-based random numbers: value i of stream `seed` is a pure function of (seed, i), so the
// same data come out whether generated on the host or in a kernel, with any thread count.

#include "miniapp/core/kokkos_compat.hpp"

#include <cstdint>

namespace miniapp {

KOKKOS_INLINE_FUNCTION std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) with 53 random bits.
KOKKOS_INLINE_FUNCTION double uniform01(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t bits = splitmix64(splitmix64(seed) ^ (index * 0xD1B54A32D192ED03ULL));
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

// Standard normal by Box-Muller from uniforms 2*index and 2*index+1 of the stream. The host and
// device math libraries may round log/cos differently in the last bit: where values must match
// exactly, generate on one side and copy (the harness does for `generate: device`).
KOKKOS_INLINE_FUNCTION double normal01(std::uint64_t seed, std::uint64_t index) {
  const double u1 = 1.0 - uniform01(seed, 2 * index);  // in (0, 1]: log is finite
  const double u2 = uniform01(seed, 2 * index + 1);
  return compat::math::sqrt(-2.0 * compat::math::log(u1)) * compat::math::cos(6.283185307179586 * u2);
}

}  // namespace miniapp
