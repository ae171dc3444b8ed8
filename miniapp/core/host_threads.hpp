#pragma once
// A host space's vendor library call (OpenBLAS's OpenMP build under Kokkos Kernels' BLAS, LAPACK
// under dense-vendor) runs on omp_get_max_threads() threads, whatever the space: Serial would get
// every core. HostThreads sets that count to the space's own for the call (Serial: one thread)
// and restores it after. Without OpenMP in the build there is nothing to set.

#include "miniapp/core/spaces.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace miniapp {

#if defined(_OPENMP)
class HostThreads {
 public:
  explicit HostThreads(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~HostThreads() { omp_set_num_threads(saved_); }
  HostThreads(const HostThreads&) = delete;
  HostThreads& operator=(const HostThreads&) = delete;

 private:
  int saved_;
};
#else
class HostThreads {
 public:
  explicit HostThreads(int) {}
};
#endif

// The guard for a call on `Space`: its concurrency on a host space; nothing to change on a device.
template <class Space>
int vendor_threads() {
  if constexpr (is_host_space<Space>()) return static_cast<int>(Space().concurrency());
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace miniapp
