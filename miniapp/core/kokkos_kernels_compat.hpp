#pragma once
// The Kokkos Kernels half of kokkos_compat.hpp: version differences of Kokkos Kernels itself.
// Kept apart so that a source which uses no Kokkos Kernels includes none of its headers (and
// keeps its syntax check against Kokkos 5, which ships without Kokkos Kernels).

#include "miniapp/core/kokkos_compat.hpp"

#if __has_include(<KokkosBatched_Gesv.hpp>)
#include <KokkosBatched_Gesv.hpp>
#endif
#include <KokkosBlas2_gemv.hpp>
#include <KokkosBlas3_gemm.hpp>

namespace miniapp::compat {

// C = alpha A B + beta C, no transposes, on the default instance of the views' space.
// KokkosBlas::gemm from 3.5 on (4.5.1 and 4.7 included) hands a product whose B has one column
// to gemv as the contiguous vectors (B.data(), B.extent(0)) and (C.data(), C.extent(0)) unless
// B or C is LayoutStride. A column of a LayoutRight matrix is not contiguous, so gemv reads B's
// first row and writes C's: the blocked LU then fails verification at orders one past a
// multiple of its panel. Such a product goes to gemv here, its columns as strided vectors.
template <class AView, class BView, class CView>
void gemm_nn(typename AView::const_value_type& alpha, const AView& a, const BView& b,
             typename CView::const_value_type& beta, const CView& c) {
  if (b.extent(1) == 1 && c.extent(1) == 1) {
    KokkosBlas::gemv("N", alpha, a, Kokkos::subview(b, Kokkos::ALL, 0), beta, Kokkos::subview(c, Kokkos::ALL, 0));
    return;
  }
  KokkosBlas::gemm("N", "N", alpha, a, b, beta, c);
}

// A batched dense solve that pivots: KokkosBatched::SerialGesv (static pivoting: rows and
// columns scaled and permuted before an unpivoted LU). Kokkos Kernels 3.4.01 has only the
// unpivoted batched LU, unsafe on random matrices. Gesv's first form took X and Y of one type;
// 4.5 separates them and deprecates the old form, so only the 4.5 form (checked against the
// 4.5.1 headers) is used.
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40500
inline constexpr bool kHasBatchedPivotingSolve = true;
#else
inline constexpr bool kHasBatchedPivotingSolve = false;
#endif
inline constexpr const char* kBatchedPivotingSolveRequirement =
    "needs KokkosBatched::SerialGesv (Kokkos Kernels >= 4.5); this build's Kokkos Kernels only has the batched LU "
    "without pivoting, which breaks down on random matrices";

// Solves a x = b for one system; `a` is overwritten, `work` is n x (n + 4). Returns 0 on success,
// non-zero when the pivoting found a zero row or column. Never called where unavailable.
template <class Matrix, class Solution, class Rhs>
KOKKOS_INLINE_FUNCTION int batched_pivoting_solve(const Matrix& a, const Solution& x, const Rhs& b,
                                                  const Matrix& work) {
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40500
  return KokkosBatched::SerialGesv<KokkosBatched::Gesv::StaticPivoting>::template invoke<Matrix, Solution, Rhs>(
      a, x, b, work);
#else
  (void)a, (void)x, (void)b, (void)work;
  return -1;
#endif
}

}  // namespace miniapp::compat
