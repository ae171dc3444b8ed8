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

#if MINIAPP_HAVE_KOKKOS_KERNELS
#if __has_include(<KokkosBatched_Gesv.hpp>)
#include <KokkosBatched_Gesv.hpp>
#endif
#include <KokkosBlas2_gemv.hpp>
#include <KokkosBlas3_gemm.hpp>
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

// A batched dense solve that pivots: KokkosBatched::SerialGesv (static pivoting: rows and
// columns scaled and permuted before an unpivoted LU). Kokkos Kernels 3.4.01 has only the
// unpivoted batched LU, unsafe on random matrices. Gesv's first form took X and Y of one type;
// 4.5 separates them and deprecates the old form, so only the 4.5 form (checked against the
// 4.5.1 headers) is used.
#if MINIAPP_HAVE_KOKKOS_KERNELS && defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40500
inline constexpr bool kHasBatchedPivotingSolve = true;
#else
inline constexpr bool kHasBatchedPivotingSolve = false;
#endif
inline constexpr const char* kBatchedPivotingSolveRequirement =
    kHasKokkosKernels ? "needs KokkosBatched::SerialGesv (Kokkos Kernels >= 4.5); this build's Kokkos Kernels only has "
                        "the batched LU without pivoting, which breaks down on random matrices"
                      : kKokkosKernelsRequirement;

// Solves a x = b for one system; `a` and `b` are overwritten (scaled), `work` is n x (n + 4).
// Returns 0 on success, non-zero when the pivoting found a zero row or column. Never called
// where unavailable.
template <class Matrix, class Solution, class Rhs>
KOKKOS_INLINE_FUNCTION int batched_pivoting_solve(const Matrix& a, const Solution& x, const Rhs& b,
                                                  const Matrix& work) {
#if MINIAPP_HAVE_KOKKOS_KERNELS && defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40500
  return KokkosBatched::SerialGesv<KokkosBatched::Gesv::StaticPivoting>::template invoke<Matrix, Solution, Rhs>(
      a, x, b, work);
#else
  (void)a, (void)x, (void)b, (void)work;
  return -1;
#endif
}

}  // namespace miniapp::compat
