#pragma once
// dense-vendor: one system after another through the vendor's LU with partial pivoting, the
// reference dense-blocked is measured against: LAPACK getrf/getrs on the host spaces (the LAPACK
// found at build time, Debian's OpenMP OpenBLAS by default), cuSOLVER on CUDA, rocSOLVER on HIP
// (cmake/MiniappDependencies.cmake finds them; MINIAPP_HAVE_* say which). Around the two calls
// the harness's own kernels do what NumPy's solve does around LAPACK: copy A into the
// column-major order LAPACK factors (a transposing copy: the Views are row-major) and b into x,
// then flag a pivot at most n eps max|A| as singular (the rule every variant uses; LAPACK flags
// exact zeros only) and zero that system's x.

#include "miniapp/core/host_threads.hpp"
#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/workloads/solver/kernels.hpp"
#include "miniapp/workloads/solver/vendor_libraries.hpp"

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#if MINIAPP_HAVE_CUSOLVER && defined(KOKKOS_ENABLE_CUDA)
#include <cusolverDn.h>
#endif
#if MINIAPP_HAVE_ROCSOLVER && defined(KOKKOS_ENABLE_HIP)
#include <rocsolver/rocsolver.h>
#endif

#if MINIAPP_HAVE_HOST_LAPACK
// The Fortran interface every LAPACK exports (no lapacke.h needed); the trailing length is the
// hidden argument gfortran passes with a character argument (ignored by C implementations).
extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, std::size_t trans_length);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, std::size_t trans_length);
}
#endif

namespace miniapp::solver::vendor {

// The factorisation and solve of one n x n column-major matrix at a time, on the space's stream,
// with the pivots, status and workspace the library needs, kept between systems.
template <class Scalar, class Space>
class Lu {
 public:
  using Memory = typename Space::memory_space;

  Lu(const Space& space, int n, Scalar* matrix) : n_(n), pivots_("solver::vendor-pivots", n), status_("solver::vendor-status") {
    (void)space, (void)matrix;
#if MINIAPP_HAVE_CUSOLVER && defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
      cusolverDnHandle_t handle = nullptr;
      check(cusolverDnCreate(&handle), "cusolverDnCreate");
      handle_ = std::shared_ptr<void>(handle, [](void* h) { cusolverDnDestroy(static_cast<cusolverDnHandle_t>(h)); });
      int lwork = 0;
      if constexpr (std::is_same_v<Scalar, double>)
        check(cusolverDnDgetrf_bufferSize(handle, n, n, matrix, n, &lwork), "cusolverDnDgetrf_bufferSize");
      else
        check(cusolverDnSgetrf_bufferSize(handle, n, n, matrix, n, &lwork), "cusolverDnSgetrf_bufferSize");
      work_ = Kokkos::View<Scalar*, Memory>("solver::vendor-work", static_cast<std::size_t>(lwork));
    }
#endif
#if MINIAPP_HAVE_ROCSOLVER && defined(KOKKOS_ENABLE_HIP)
    if constexpr (std::is_same_v<Space, compat::HIP>) {
      rocblas_handle handle = nullptr;
      check(rocblas_create_handle(&handle), "rocblas_create_handle");
      handle_ = std::shared_ptr<void>(handle, [](void* h) { rocblas_destroy_handle(static_cast<rocblas_handle>(h)); });
    }
#endif
  }

  // matrix = P L U in place (pivots kept); an exact zero pivot is left for the caller's check.
  void factor(const Space& space, Scalar* matrix) {
    (void)space, (void)matrix;
    const compat::ProfilingRegion region("vendor getrf");  // no Kokkos kernel: a tool sees this region
    if constexpr (is_host_space<Space>()) {
#if MINIAPP_HAVE_HOST_LAPACK
      HostThreads threads(vendor_threads<Space>());
      int info = 0;
      if constexpr (std::is_same_v<Scalar, double>)
        dgetrf_(&n_, &n_, matrix, &n_, pivots_.data(), &info);
      else
        sgetrf_(&n_, &n_, matrix, &n_, pivots_.data(), &info);
      if (info < 0) throw std::logic_error("solver: LAPACK getrf rejected argument " + std::to_string(-info));
#endif
    }
#if MINIAPP_HAVE_CUSOLVER && defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
      const auto handle = static_cast<cusolverDnHandle_t>(handle_.get());
      check(cusolverDnSetStream(handle, space.cuda_stream()), "cusolverDnSetStream");
      if constexpr (std::is_same_v<Scalar, double>)
        check(cusolverDnDgetrf(handle, n_, n_, matrix, n_, work_.data(), pivots_.data(), status_.data()), "cusolverDnDgetrf");
      else
        check(cusolverDnSgetrf(handle, n_, n_, matrix, n_, work_.data(), pivots_.data(), status_.data()), "cusolverDnSgetrf");
    }
#endif
#if MINIAPP_HAVE_ROCSOLVER && defined(KOKKOS_ENABLE_HIP)
    if constexpr (std::is_same_v<Space, compat::HIP>) {
      const auto handle = static_cast<rocblas_handle>(handle_.get());
      check(rocblas_set_stream(handle, space.hip_stream()), "rocblas_set_stream");
      if constexpr (std::is_same_v<Scalar, double>)
        check(rocsolver_dgetrf(handle, n_, n_, matrix, n_, pivots_.data(), status_.data()), "rocsolver_dgetrf");
      else
        check(rocsolver_sgetrf(handle, n_, n_, matrix, n_, pivots_.data(), status_.data()), "rocsolver_sgetrf");
    }
#endif
  }

  // x = A^-1 x from the factors of `matrix`.
  void solve(const Space& space, const Scalar* matrix, Scalar* x) {
    (void)space, (void)matrix, (void)x;
    const compat::ProfilingRegion region("vendor getrs");
    if constexpr (is_host_space<Space>()) {
#if MINIAPP_HAVE_HOST_LAPACK
      HostThreads threads(vendor_threads<Space>());
      const char no_transpose = 'N';
      const int one = 1;
      int info = 0;
      if constexpr (std::is_same_v<Scalar, double>)
        dgetrs_(&no_transpose, &n_, &one, matrix, &n_, pivots_.data(), x, &n_, &info, 1);
      else
        sgetrs_(&no_transpose, &n_, &one, matrix, &n_, pivots_.data(), x, &n_, &info, 1);
      if (info < 0) throw std::logic_error("solver: LAPACK getrs rejected argument " + std::to_string(-info));
#endif
    }
#if MINIAPP_HAVE_CUSOLVER && defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
      const auto handle = static_cast<cusolverDnHandle_t>(handle_.get());
      check(cusolverDnSetStream(handle, space.cuda_stream()), "cusolverDnSetStream");
      if constexpr (std::is_same_v<Scalar, double>)
        check(cusolverDnDgetrs(handle, CUBLAS_OP_N, n_, 1, matrix, n_, pivots_.data(), x, n_, status_.data()), "cusolverDnDgetrs");
      else
        check(cusolverDnSgetrs(handle, CUBLAS_OP_N, n_, 1, matrix, n_, pivots_.data(), x, n_, status_.data()), "cusolverDnSgetrs");
    }
#endif
#if MINIAPP_HAVE_ROCSOLVER && defined(KOKKOS_ENABLE_HIP)
    if constexpr (std::is_same_v<Space, compat::HIP>) {
      const auto handle = static_cast<rocblas_handle>(handle_.get());
      check(rocblas_set_stream(handle, space.hip_stream()), "rocblas_set_stream");
      if constexpr (std::is_same_v<Scalar, double>)
        check(rocsolver_dgetrs(handle, rocblas_operation_none, n_, 1, const_cast<Scalar*>(matrix), n_, pivots_.data(), x, n_), "rocsolver_dgetrs");
      else
        check(rocsolver_sgetrs(handle, rocblas_operation_none, n_, 1, const_cast<Scalar*>(matrix), n_, pivots_.data(), x, n_), "rocsolver_sgetrs");
    }
#endif
  }

 private:
  template <class Status>
  static void check(Status status, const char* call) {
    if (static_cast<int>(status) != 0)
      throw std::runtime_error(std::string("solver: dense-vendor: ") + call + " failed with status " +
                               std::to_string(static_cast<int>(status)));
  }

  int n_;
  Kokkos::View<int*, Memory> pivots_;
  Kokkos::View<int, Memory> status_;  // the device libraries' info: the check below does not read it
  Kokkos::View<Scalar*, Memory> work_;
  std::shared_ptr<void> handle_;
};

// Rows and columns of the tiles the host's transposing copy moves at a time: a tile of A and of
// its copy (8 KiB each in float64) stay in L1 while one is read by rows and the other written.
inline constexpr int kCopyTile = 32;

// System s of a (row-major) into lu (column-major), b into x's row, max|A| into scale. On the
// host each thread copies whole bands of kCopyTile rows tile by tile; a device copies one element
// per thread (Kokkos' MDRange tiling).
template <class Space, class A, class B, class X, class LU, class Scale, MINIAPP_KERNEL_UNIT>
void copy_in(const Space& space, const A& a, const B& b, const X& x, const LU& lu, const Scale& scale, int s) {
  using Scalar = typename A::non_const_value_type;
  using Max = Kokkos::Max<Scalar, typename Space::memory_space>;
  const int n = static_cast<int>(lu.extent(0));
  if constexpr (is_host_space<Space>()) {
    const int bands = (n + kCopyTile - 1) / kCopyTile;
    Kokkos::parallel_reduce(
        "solver::dense-vendor-copy", Kokkos::RangePolicy<Space>(space, 0, bands),
        KOKKOS_LAMBDA(const int band, Scalar& largest) {
          const int i0 = band * kCopyTile, i1 = i0 + kCopyTile < n ? i0 + kCopyTile : n;
          for (int j0 = 0; j0 < n; j0 += kCopyTile) {
            const int j1 = j0 + kCopyTile < n ? j0 + kCopyTile : n;
            for (int j = j0; j < j1; ++j)
              for (int i = i0; i < i1; ++i) lu(i, j) = a(s, i, j);
          }
          // A pass of its own over the band's rows (in cache): contiguous, so it vectorises.
          for (int i = i0; i < i1; ++i) {
            for (int j = 0; j < n; ++j) largest = compat::math::fabs(a(s, i, j)) > largest ? compat::math::fabs(a(s, i, j)) : largest;
            x(s, i) = b(s, i);
          }
        },
        Max(scale));
  } else {
    Kokkos::parallel_reduce(
        "solver::dense-vendor-copy", Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {0, 0}, {n, n}),
        KOKKOS_LAMBDA(const int i, const int j, Scalar& largest) {
          lu(i, j) = a(s, i, j);
          const Scalar v = compat::math::fabs(a(s, i, j));
          if (v > largest) largest = v;
          if (j == 0) x(s, i) = b(s, i);
        },
        Max(scale));
  }
}

// The index of the first pivot at most n eps max|A| into `first`; none leaves Min's identity
// (the largest int), which record_pivot reads as "no tiny pivot" (any value >= n).
template <class Space, class LU, class Scale, class First, MINIAPP_KERNEL_UNIT>
void find_tiny_pivot(const Space& space, const LU& lu, const Scale& scale, const First& first) {
  using Scalar = typename LU::non_const_value_type;
  const int n = static_cast<int>(lu.extent(0));
  const Scalar tiny_factor = tiny_pivot_factor<Scalar>(lu.extent(0));
  Kokkos::parallel_reduce(
      "solver::dense-vendor-pivots", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(const int k, int& lowest) {
        if (is_tiny_pivot(lu(k, k), tiny_factor * scale()) && k < lowest) lowest = k;
      },
      Kokkos::Min<int, typename Space::memory_space>(first));
}

// info(s) from `first`; a singular system's x (inf or NaN after the solve) becomes 0.
template <class Space, class X, class Info, class First, MINIAPP_KERNEL_UNIT>
void record_pivot(const Space& space, const X& x, const Info& info, const First& first, int s) {
  const int n = static_cast<int>(x.extent(1));
  Kokkos::parallel_for(
      "solver::dense-vendor-info", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(const int i) {
        const int k = first();
        const bool singular = k < n;
        if (singular) x(s, i) = 0;
        if (i == 0) info(s) = singular ? k + 1 : 0;
      });
}

}  // namespace miniapp::solver::vendor
