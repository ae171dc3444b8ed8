#pragma once
// Every difference between the Kokkos versions the mini-app supports (3.4.01 from Debian
// bookworm through 5.x from Spack) is absorbed here, so kernels never test KOKKOS_VERSION.

#include <Kokkos_Core.hpp>

#include <string>

namespace miniapp::compat {

// Host mirror of a View: `HostMirror` is deprecated in Kokkos 5, `host_mirror_type` exists in all.
template <class View>
using host_mirror_t = typename View::host_mirror_type;

// Math functions left Kokkos::Experimental in 3.6.
namespace math {
#if KOKKOS_VERSION >= 30600
using Kokkos::fabs;
using Kokkos::cos;
using Kokkos::exp;
using Kokkos::isfinite;
using Kokkos::log;
using Kokkos::pow;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::cos;
using Kokkos::Experimental::exp;
using Kokkos::Experimental::isfinite;
using Kokkos::Experimental::log;
using Kokkos::Experimental::pow;
using Kokkos::Experimental::sqrt;
#endif
}  // namespace math

// HIP left Kokkos::Experimental in 4.0.
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
using HIP = Kokkos::HIP;
#else
using HIP = Kokkos::Experimental::HIP;
#endif
#endif

inline std::string kokkos_version() {
  return std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
         std::to_string(KOKKOS_VERSION % 100);
}

// Kokkos Kernels 3.4 defines no version macro; the build system passes the version it found.
inline std::string kokkos_kernels_version() {
#if defined(MINIAPP_KOKKOSKERNELS_VERSION)
  return MINIAPP_KOKKOSKERNELS_VERSION;
#else
  return "unknown";
#endif
}

}  // namespace miniapp::compat

// ---- Kokkos Kernels ----
// Differences between Kokkos Kernels versions (the batched pivoting solve of the solver
// workload) live in kokkos_kernels_compat.hpp, so sources without Kokkos Kernels include none of it.
