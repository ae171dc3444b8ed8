#pragma once
// Which vendor LU this build has for each compiled space (MINIAPP_HAVE_*, set by
// cmake/MiniappDependencies.cmake): what --list and the deck know of dense-vendor before anything
// runs. The calls themselves are in vendor.hpp.

#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/spaces.hpp"

#include <string>
#include <type_traits>

#if !defined(MINIAPP_HAVE_HOST_LAPACK)
#define MINIAPP_HAVE_HOST_LAPACK 0
#endif
#if !defined(MINIAPP_HAVE_CUSOLVER)
#define MINIAPP_HAVE_CUSOLVER 0
#endif
#if !defined(MINIAPP_HAVE_ROCSOLVER)
#define MINIAPP_HAVE_ROCSOLVER 0
#endif

namespace miniapp::solver::vendor {

// Whether this build has a vendor LU for Space.
template <class Space>
constexpr bool available() {
  if constexpr (is_host_space<Space>()) return MINIAPP_HAVE_HOST_LAPACK != 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) return MINIAPP_HAVE_CUSOLVER != 0;
#endif
#if defined(KOKKOS_ENABLE_HIP)
  if constexpr (std::is_same_v<Space, compat::HIP>) return MINIAPP_HAVE_ROCSOLVER != 0;
#endif
  return false;
}

template <class Space>
constexpr const char* library() {
  if constexpr (is_host_space<Space>()) return "LAPACK";
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) return "cuSOLVER";
#endif
#if defined(KOKKOS_ENABLE_HIP)
  if constexpr (std::is_same_v<Space, compat::HIP>) return "rocSOLVER";
#endif
  return "a vendor LU";
}

// Empty when every compiled space has its vendor LU, else what is missing: dense-vendor is then
// unavailable in this build.
inline std::string unavailable_reason() {
  std::string missing;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (!available<Space>()) missing += (missing.empty() ? "" : ", ") + std::string(library<Space>()) + " for " + space_name<Space>();
  });
  if (missing.empty()) return "";
  return "needs " + missing + ", not found when this build was configured (MINIAPP_WITH_VENDOR_SOLVERS; "
         "LAPACK: libopenblas-openmp-dev or MINIAPP_HOST_BLAS_LIBRARY)";
}

}  // namespace miniapp::solver::vendor
