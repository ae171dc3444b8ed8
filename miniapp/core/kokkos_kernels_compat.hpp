#pragma once
// The Kokkos Kernels half of kokkos_compat.hpp: whether this build has Kokkos Kernels at all, and
// the version differences of Kokkos Kernels itself. Every call into Kokkos Kernels goes through
// here. Without Kokkos Kernels (MINIAPP_HAVE_KOKKOS_KERNELS=0: Kokkos 5 as Debian ships it, a site
// without it) the variants that need it say so through kKokkosKernelsRequirement and are never
// run; these functions then throw if called.

#include "miniapp/core/host_threads.hpp"
#include "miniapp/core/kokkos_compat.hpp"

#include <stdexcept>
#include <string>

#if !defined(MINIAPP_HAVE_KOKKOS_KERNELS)
#if __has_include(<KokkosBlas3_gemm.hpp>)
#define MINIAPP_HAVE_KOKKOS_KERNELS 1
#else
#define MINIAPP_HAVE_KOKKOS_KERNELS 0
#endif
#endif

// MINIAPP_BATCHED_LU: which batched LU with partial pivoting this Kokkos Kernels has (see
// batched_lu_factor): 46 from 4.6 on, 45 in 4.5, 0 before.
#if MINIAPP_HAVE_KOKKOS_KERNELS
#include <KokkosBlas2_gemv.hpp>
#include <KokkosBlas3_gemm.hpp>
#include <KokkosKernels_config.h>
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40600
#define MINIAPP_BATCHED_LU 46
#include <KokkosBatched_Getrf.hpp>
#include <KokkosBatched_Getrs.hpp>
#elif defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40500
#define MINIAPP_BATCHED_LU 45
#include <KokkosBatched_Gemm_Decl.hpp>
#include <KokkosBatched_Iamax.hpp>
#include <KokkosBatched_Laswp.hpp>
#include <KokkosBatched_Trsv_Decl.hpp>
#endif
#endif
#if !defined(MINIAPP_BATCHED_LU)
#define MINIAPP_BATCHED_LU 0
#endif

namespace miniapp::compat {

inline constexpr bool kHasKokkosKernels = MINIAPP_HAVE_KOKKOS_KERNELS != 0;
inline constexpr const char* kKokkosKernelsRequirement =
    "needs Kokkos Kernels, which this build was configured without (Kokkos Kernels not found)";
// "" where this build has Kokkos Kernels, else why a variant that calls it is absent.
inline const char* unavailable_without_kokkos_kernels() { return kHasKokkosKernels ? "" : kKokkosKernelsRequirement; }

[[noreturn]] inline void no_kokkos_kernels(const char* routine) {
  throw std::logic_error(std::string(routine) + " called in a build without Kokkos Kernels: a variant that " +
                         kKokkosKernelsRequirement + " was run");
}

// C = alpha op(A) op(B) + beta C, on the default instance of the views' space; on a host space
// the vendor BLAS Kokkos Kernels calls runs on that space's threads (HostThreads).
template <class AView, class BView, class CView>
void gemm(const char trans_a[], const char trans_b[], typename AView::const_value_type& alpha, const AView& a,
          const BView& b, typename CView::const_value_type& beta, const CView& c) {
#if MINIAPP_HAVE_KOKKOS_KERNELS
  HostThreads threads(vendor_threads<typename CView::execution_space>());
  KokkosBlas::gemm(trans_a, trans_b, alpha, a, b, beta, c);
#else
  (void)trans_a, (void)trans_b, (void)alpha, (void)a, (void)b, (void)beta, (void)c;
  no_kokkos_kernels("KokkosBlas::gemm");
#endif
}

// y = alpha op(A) x + beta y, on the default instance of the views' space (threads as gemm's).
template <class AView, class XView, class YView>
void gemv(const char trans[], typename AView::const_value_type& alpha, const AView& a, const XView& x,
          typename YView::const_value_type& beta, const YView& y) {
#if MINIAPP_HAVE_KOKKOS_KERNELS
  HostThreads threads(vendor_threads<typename YView::execution_space>());
  KokkosBlas::gemv(trans, alpha, a, x, beta, y);
#else
  (void)trans, (void)alpha, (void)a, (void)x, (void)beta, (void)y;
  no_kokkos_kernels("KokkosBlas::gemv");
#endif
}

// C = alpha A B + beta C, no transposes. KokkosBlas::gemm from 3.5 on (4.5.1 and 4.7 included)
// hands a product whose B has one column to gemv as the contiguous vectors (B.data(),
// B.extent(0)) and (C.data(), C.extent(0)) unless B or C is LayoutStride. A column of a
// LayoutRight matrix is not contiguous, so gemv reads B's first row and writes C's: the blocked
// LU then failed verification at orders one past a multiple of its panel. Such a product goes to
// gemv here, its columns as strided vectors.
template <class AView, class BView, class CView>
void gemm_nn(typename AView::const_value_type& alpha, const AView& a, const BView& b,
             typename CView::const_value_type& beta, const CView& c) {
  if (b.extent(1) == 1 && c.extent(1) == 1) {
    gemv("N", alpha, a, Kokkos::subview(b, Kokkos::ALL, 0), beta, Kokkos::subview(c, Kokkos::ALL, 0));
    return;
  }
  gemm("N", "N", alpha, a, b, beta, c);
}

// A batched LU with partial pivoting, one system per call (row interchanges recorded in `pivots`
// as LAPACK's ipiv, 0-based). Kokkos Kernels 4.6 has it as KokkosBatched::SerialGetrf and
// SerialGetrs. 4.5 has the pieces: the same elimination (LAPACK's getf2: pivot by SerialIamax,
// the trailing update a rank-1 SerialGemm) and the solve (SerialLaswp, then two SerialTrsv).
// 4.5's only whole solver, SerialGesv, pivots statically (rows and columns scaled and permuted
// once, then an LU without pivoting): it is not backward stable, and iterative refinement on top
// of it still failed about one float32 system of order >= 127 in a thousand. Kokkos Kernels
// 3.4.01 has only the batched LU without pivoting, unsafe on random matrices.
inline constexpr bool kHasBatchedPivotingSolve = MINIAPP_BATCHED_LU != 0;
inline constexpr const char* kBatchedPivotingSolveRequirement =
    kHasKokkosKernels ? "needs KokkosBatched's LU with partial pivoting (Kokkos Kernels >= 4.5); this build's Kokkos "
                        "Kernels only has the batched LU without pivoting, which breaks down on random matrices"
                      : kKokkosKernelsRequirement;

// Factors the n x n matrix `a` in place into P L U. A zero pivot column is left as it is (no
// division), as LAPACK does; the caller reads U's diagonal for the first tiny pivot. Never called
// where unavailable.
template <class Matrix, class Pivots>
KOKKOS_INLINE_FUNCTION void batched_lu_factor(const Matrix& a, const Pivots& pivots) {
#if MINIAPP_BATCHED_LU == 46
  KokkosBatched::SerialGetrf<KokkosBatched::Algo::Getrf::Unblocked>::invoke(a, pivots);
#elif MINIAPP_BATCHED_LU == 45
  using Scalar = typename Matrix::non_const_value_type;
  const int n = static_cast<int>(a.extent(0));
  for (int k = 0; k < n; ++k) {
    const int p = k + static_cast<int>(KokkosBatched::SerialIamax::invoke(
                          Kokkos::subview(a, Kokkos::pair<int, int>(k, n), k)));
    pivots(k) = p;
    if (a(p, k) == Scalar(0)) continue;
    if (p != k)
      for (int j = 0; j < n; ++j) {
        const Scalar t = a(k, j);
        a(k, j) = a(p, j);
        a(p, j) = t;
      }
    const Scalar inverse_pivot = Scalar(1) / a(k, k);
    for (int i = k + 1; i < n; ++i) a(i, k) *= inverse_pivot;
    if (k + 1 < n) {
      const Kokkos::pair<int, int> below(k + 1, n), pivot_row(k, k + 1), pivot_column(k, k + 1);
      KokkosBatched::SerialGemm<KokkosBatched::Trans::NoTranspose, KokkosBatched::Trans::NoTranspose,
                                KokkosBatched::Algo::Gemm::Unblocked>::invoke(Scalar(-1),
                                                                              Kokkos::subview(a, below, pivot_column),
                                                                              Kokkos::subview(a, pivot_row, below),
                                                                              Scalar(1), Kokkos::subview(a, below, below));
    }
  }
#else
  (void)a, (void)pivots;
#endif
}

// Solves with the factors of batched_lu_factor: b becomes x.
template <class Matrix, class Pivots, class Vector>
KOKKOS_INLINE_FUNCTION void batched_lu_solve(const Matrix& lu, const Pivots& pivots, const Vector& b) {
#if MINIAPP_BATCHED_LU == 46
  KokkosBatched::SerialGetrs<KokkosBatched::Trans::NoTranspose, KokkosBatched::Algo::Getrs::Unblocked>::invoke(
      lu, pivots, b);
#elif MINIAPP_BATCHED_LU == 45
  using Scalar = typename Matrix::non_const_value_type;
  KokkosBatched::SerialLaswp<KokkosBatched::Direct::Forward>::invoke(pivots, b);
  KokkosBatched::SerialTrsv<KokkosBatched::Uplo::Lower, KokkosBatched::Trans::NoTranspose, KokkosBatched::Diag::Unit,
                            KokkosBatched::Algo::Trsv::Unblocked>::invoke(Scalar(1), lu, b);
  KokkosBatched::SerialTrsv<KokkosBatched::Uplo::Upper, KokkosBatched::Trans::NoTranspose,
                            KokkosBatched::Diag::NonUnit, KokkosBatched::Algo::Trsv::Unblocked>::invoke(Scalar(1), lu,
                                                                                                        b);
#else
  (void)lu, (void)pivots, (void)b;
#endif
}

}  // namespace miniapp::compat
