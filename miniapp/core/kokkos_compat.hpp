#pragma once
// Every difference between the Kokkos versions the mini-app supports (3.4.01 from Debian
// bookworm through 5.x from Spack) is absorbed here, so kernels never test KOKKOS_VERSION.

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace miniapp::compat {

// TeamPolicy<Space>::scratch_size_max(level), or nothing before Kokkos::initialize. From Kokkos 4
// on, CUDA and HIP read it from an execution space instance (the device's shared memory per
// block), and making an instance before initialize aborts the program ("Kokkos::Cuda::Cuda
// instance constructor : ERROR device not initialized"); Kokkos 3.4 returned constants. Deck
// parsing and --list run before initialize. Host spaces answer with constants in every version.
template <class Space>
std::optional<std::size_t> team_scratch_size_max(int level) {
  constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
  if (!host && !Kokkos::is_initialized()) return std::nullopt;
  return static_cast<std::size_t>(Kokkos::TeamPolicy<Space>::scratch_size_max(level));
}

// Host mirror of a View: `HostMirror` is deprecated in Kokkos 5, `host_mirror_type` exists in all.
template <class View>
using host_mirror_t = typename View::host_mirror_type;

// Math functions left Kokkos::Experimental in 3.6.
namespace math {
#if KOKKOS_VERSION >= 30600
using Kokkos::fabs;
using Kokkos::cos;
using Kokkos::exp;
using Kokkos::exp2;
using Kokkos::isfinite;
using Kokkos::log;
using Kokkos::pow;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::cos;
using Kokkos::Experimental::exp;
using Kokkos::Experimental::exp2;
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

// Under MPI, the Kokkos argument that gives each rank of a node its own device where it sees
// several (with srun --gpus-per-task=1 each sees one, and any mapping picks it): Kokkos 3.7 and
// later map the launcher's local rank themselves (--kokkos-map-device-id-by=mpi_rank); 3.4 maps
// it only when told the device count, so it gets the device id, the local rank modulo the
// devices the vendor runtime reports (--kokkos-device). Empty without a device backend, or
// where the runtime reports none.
inline std::string device_by_local_rank_argument([[maybe_unused]] int local_rank) {
#if !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP)
  return "";
#elif KOKKOS_VERSION >= 30700
  return "--kokkos-map-device-id-by=mpi_rank";
#else
  int count = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
#else
  if (hipGetDeviceCount(&count) != hipSuccess) count = 0;
#endif
  return count > 0 ? "--kokkos-device=" + std::to_string(local_rank % count) : "";
#endif
}

// A Kokkos Tools profiling region for the lifetime of the object: what a tool loaded through
// KOKKOS_PROFILE_LIBRARY (Kokkos 3.4) or KOKKOS_TOOLS_LIBS (3.7 on) shows as a node of its tree.
// Kokkos::Profiling::ScopedRegion exists from 4.1 only; pushRegion/popRegion in every version.
// Without a tool both cost a null-pointer test.
class ProfilingRegion {
 public:
  explicit ProfilingRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(const ProfilingRegion&) = delete;
  ProfilingRegion& operator=(const ProfilingRegion&) = delete;
};


// Sets Kokkos' region and kernel callbacks (nullptr clears them): what a Kokkos Tools library
// gets, for a listener inside the program (--kernel-times, the tests).
template <class Push, class Pop, class Begin, class End>
void set_region_and_kernel_callbacks(Push push, Pop pop, Begin begin, End end) {
  namespace tools = Kokkos::Tools::Experimental;
  tools::set_push_region_callback(push);
  tools::set_pop_region_callback(pop);
  tools::set_begin_parallel_for_callback(begin);
  tools::set_end_parallel_for_callback(end);
  tools::set_begin_parallel_reduce_callback(begin);
  tools::set_end_parallel_reduce_callback(end);
  tools::set_begin_parallel_scan_callback(begin);
  tools::set_end_parallel_scan_callback(end);
}

// ---- Concurrent execution-space instances and pinned host memory (distance, chunked output) ----
// A device-to-host copy overlaps a kernel only when both are enqueued on different instances and
// the host memory is pinned. Host spaces have nothing to overlap: one instance, plain host memory.

template <class Space>
struct pinned_host_memory {
  using type = Kokkos::HostSpace;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct pinned_host_memory<Kokkos::Cuda> {
  using type = Kokkos::CudaHostPinnedSpace;
};
#endif
#if defined(KOKKOS_ENABLE_HIP)
template <>
struct pinned_host_memory<HIP> {
#if KOKKOS_VERSION >= 40000
  using type = Kokkos::HIPHostPinnedSpace;
#else
  using type = Kokkos::Experimental::HIPHostPinnedSpace;
#endif
};
#endif

// Two instances of `Space` whose work may run concurrently. Kokkos 4 has partition_space for
// every device backend; Kokkos 3 only wraps a CUDA stream the caller owns (Kokkos::Cuda(stream)).
// Elsewhere both "instances" are the given one and concurrent() says so.
template <class Space, bool OnDevice = !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                                                   typename Space::memory_space>::accessible>
class ConcurrentInstances {
 public:
  explicit ConcurrentInstances(const Space& space) : instances_{space, space} {}
  static constexpr bool concurrent() { return false; }
  const Space& operator[](std::size_t k) const { return instances_[k % 2]; }

 private:
  Space instances_[2];
};

#if KOKKOS_VERSION >= 40000
template <class Space>
class ConcurrentInstances<Space, true> {
 public:
  explicit ConcurrentInstances(const Space& space) {
    const auto parts = Kokkos::Experimental::partition_space(space, 1, 1);
    instances_[0] = parts[0];
    instances_[1] = parts[1];
  }
  static constexpr bool concurrent() { return true; }
  const Space& operator[](std::size_t k) const { return instances_[k % 2]; }

 private:
  Space instances_[2];
};
#elif defined(KOKKOS_ENABLE_CUDA)
template <>
class ConcurrentInstances<Kokkos::Cuda, true> {
 public:
  explicit ConcurrentInstances(const Kokkos::Cuda&) {
    for (int k = 0; k < 2; ++k) {
      cudaStreamCreate(&streams_[k]);
      instances_[k] = Kokkos::Cuda(streams_[k]);
    }
  }
  ConcurrentInstances(const ConcurrentInstances&) = delete;
  ConcurrentInstances& operator=(const ConcurrentInstances&) = delete;
  ~ConcurrentInstances() {
    for (int k = 0; k < 2; ++k) {
      instances_[k].fence();
      instances_[k] = Kokkos::Cuda();  // release the instance before its stream
      cudaStreamDestroy(streams_[k]);
    }
  }
  static constexpr bool concurrent() { return true; }
  const Kokkos::Cuda& operator[](std::size_t k) const { return instances_[k % 2]; }

 private:
  cudaStream_t streams_[2] = {};
  Kokkos::Cuda instances_[2];
};
#endif

}  // namespace miniapp::compat

// ---- Kokkos Kernels ----
// Differences between Kokkos Kernels versions (the batched pivoting solve of the solver
// workload) live in kokkos_kernels_compat.hpp, so sources without Kokkos Kernels include none of it.
