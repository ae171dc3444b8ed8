#pragma once
// dense-blocked: the right-looking blocked LU of one large system with partial pivoting
// (LAPACK's getrf order), then the two triangular solves. Each panel is factored recursively as
// dgetrf2 does, and the block row of U is a triangular solve halved the same way, so most flops
// of panel and solve go through KokkosBlas::gemm. The recursion runs on the host and only
// launches kernels; free functions templated on the space, as every kernel here.

#include "miniapp/core/flat_index.hpp"
#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/interruption.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/kokkos_kernels_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/workloads/solver/blocked_leaf_resident.hpp"
#include "miniapp/workloads/solver/blocked_solves.hpp"
#include "miniapp/workloads/solver/blocked_work.hpp"
#include "miniapp/workloads/solver/kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace miniapp::solver::blocked {

// Whether the swaps of rows j + k and p_k (k = 0..3, each p_k >= j + k) touch different rows, so
// that their order does not matter: no p_k is a later j + k', and no two p are equal. (A swap of
// a row with itself, p_k == j + k, can equal no other p: each later one is above j + k.)
KOKKOS_INLINE_FUNCTION bool swaps_disjoint(const int j, const int p0, const int p1, const int p2, const int p3) {
  const bool later_row = p0 == j + 1 || p0 == j + 2 || p0 == j + 3 || p1 == j + 2 || p1 == j + 3 || p2 == j + 3;
  const bool same_row = p0 == p1 || p0 == p2 || p0 == p3 || p1 == p2 || p1 == p3 || p2 == p3;
  return !later_row && !same_row;
}

// The four swaps of one column in order (where swaps_disjoint is false).
template <class LU>
KOKKOS_INLINE_FUNCTION void swap_in_order(const LU& lu, const int c, const int j, const int p0, const int p1,
                                          const int p2, const int p3) {
  const int p[4] = {p0, p1, p2, p3};
  for (int k = 0; k < 4; ++k) {
    const auto t = lu(j + k, c);
    lu(j + k, c) = lu(p[k], c);
    lu(p[k], c) = t;
  }
}

// The row swaps of pivots [j0, j1), in order, applied to columns [c_lo, c_hi) (and to b with
// `with_rhs`), a chunk of columns per thread (LAPACK's dlaswp).
template <Form F, class Scalar, class Space, MINIAPP_KERNEL_UNIT>
void swap_rows(const Space& space, const Work<Scalar, Space>& w, int j0, int j1, int c_lo, int c_hi, bool with_rhs) {
  constexpr int chunk_width = kColumnChunk<Space>;
  const int chunks = (c_hi - c_lo + chunk_width - 1) / chunk_width;
  if (chunks + (with_rhs ? 1 : 0) == 0) return;
  const auto info = w.info;
  const auto lu = w.lu;
  const auto rhs = w.rhs;
  const auto pivots = w.pivots;
  const int s = w.system;
  Kokkos::parallel_for(
      "solver::dense-swap", Kokkos::RangePolicy<Space>(space, 0, chunks + (with_rhs ? 1 : 0)),
      KOKKOS_LAMBDA(const int chunk) {
        if (info(s) != 0) return;
        if (chunk == chunks) {
          for (int j = j0; j < j1; ++j) {
            const int p = pivots(j);
            const Scalar t = rhs(j);
            rhs(j) = rhs(p);
            rhs(p) = t;
          }
          return;
        }
        const int lo = c_lo + chunk * chunk_width;
        const int hi = lo + chunk_width < c_hi ? lo + chunk_width : c_hi;
        int j = j0;
        // Device form: four swaps at a time where they touch eight different rows (they commute
        // then), all eight loads before the stores: one swap after another, each waited on a load
        // and a store. (The host form swaps whole rows of its 64-column chunk, contiguous: grouped
        // it was slower. Times: docs/results/README.md, the H200 of 2026-11-26.)
        for (; kDeviceForm<F, Space> && j + 4 <= j1; j += 4) {
          const int p0 = pivots(j), p1 = pivots(j + 1), p2 = pivots(j + 2), p3 = pivots(j + 3);
          if (!swaps_disjoint(j, p0, p1, p2, p3)) {
            for (int c = lo; c < hi; ++c) swap_in_order(lu, c, j, p0, p1, p2, p3);
            continue;
          }
          for (int c = lo; c < hi; ++c) {
            const Scalar a0 = lu(j, c), a1 = lu(j + 1, c), a2 = lu(j + 2, c), a3 = lu(j + 3, c);
            const Scalar b0 = lu(p0, c), b1 = lu(p1, c), b2 = lu(p2, c), b3 = lu(p3, c);
            lu(j, c) = b0, lu(j + 1, c) = b1, lu(j + 2, c) = b2, lu(j + 3, c) = b3;
            lu(p0, c) = a0, lu(p1, c) = a1, lu(p2, c) = a2, lu(p3, c) = a3;
          }
        }
        for (; j < j1; ++j) {
          const int p = pivots(j);
          if (p == j) continue;
          for (int c = lo; c < hi; ++c) {
            const Scalar t = lu(j, c);
            lu(j, c) = lu(p, c);
            lu(p, c) = t;
          }
        }
      });
}

// LU with partial pivoting of columns [c0, c1), rows [c0, n), whose left columns are final
// (LAPACK's dgetrf2): the left half is factored, its swaps applied to the right half, the right
// half updated by a triangular solve and a gemm, then factored in turn; its swaps are applied to
// the left half.
template <Form F, class Scalar, class Space>
void factor_columns(const Space& space, const Work<Scalar, Space>& w, int c0, int c1) {
  const int width = c1 - c0;
  if (width <= kLeaf) return factor_leaf<F>(space, w, c0, c1);
  const int cm = c0 + recursion_split(width);
  factor_columns<F>(space, w, c0, cm);
  swap_rows<F>(space, w, c0, cm, cm, c1, false);
  lower_solve<F>(space, w, c0, cm, cm, c1);
  update(space, w, cm, w.n(), c0, cm, cm, c1);
  factor_columns<F>(space, w, cm, c1);
  swap_rows<F>(space, w, cm, c1, c0, cm, false);
}

// System w.system of a and b into the work space, its largest |A| (the scale of its tiny pivot)
// into w.scale and its info reset. Host form: a row per thread, contiguous.
template <class Scalar, class Space, class A, class B, MINIAPP_KERNEL_UNIT>
void copy_system_rows(const Space& space, const Work<Scalar, Space>& w, const A& a, const B& b) {
  const auto info = w.info;
  const auto lu = w.lu;
  const auto rhs = w.rhs;
  const auto barrier = w.leaf_barrier;  // factor_leaf_resident's, reset for the system
  const int n = w.n();
  const int s = w.system;
  Kokkos::parallel_reduce(
      "solver::dense-copy", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(const int i, Scalar& largest) {
        for (int j = 0; j < n; ++j) {
          lu(i, j) = a(s, i, j);
          const Scalar v = compat::math::fabs(lu(i, j));
          if (v > largest) largest = v;
        }
        rhs(i) = b(s, i);
        if (i == 0) info(s) = 0, barrier(0) = 0, barrier(1) = 0;
      },
      Kokkos::Max<Scalar, typename Space::memory_space>(w.scale));
}

// Device form: a value per thread, neighbours in a row (the row per thread above read values n
// apart across a warp, some twenty times the time its bytes take on a GPU).
template <class Scalar, class Space, class A, class B, MINIAPP_KERNEL_UNIT>
void copy_system_flat(const Space& space, const Work<Scalar, Space>& w, const A& a, const B& b) {
  const auto info = w.info;
  const auto lu = w.lu;
  const auto rhs = w.rhs;
  const auto barrier = w.leaf_barrier;
  const auto n = static_cast<std::int64_t>(w.n());
  const int s = w.system;
  const FlatRows split(n * n, n);
  Kokkos::parallel_reduce(
      "solver::dense-copy", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n * n),
      KOKKOS_LAMBDA(const std::int64_t t, Scalar& largest) {
        const auto i = static_cast<int>(split.row(t));
        const auto j = static_cast<int>(t - i * n);
        lu(i, j) = a(s, i, j);
        const Scalar v = compat::math::fabs(lu(i, j));
        if (v > largest) largest = v;
        if (j == 0) rhs(i) = b(s, i);
        if (t == 0) info(s) = 0, barrier(0) = 0, barrier(1) = 0;
      },
      Kokkos::Max<Scalar, typename Space::memory_space>(w.scale));
}

// Whether a resident leaf of the system gave up waiting at its barrier (a wait for the space).
template <class Scalar, class Space>
bool resident_leaf_given_up(const Work<Scalar, Space>& w) {
  int given_up = 0;
  Kokkos::deep_copy(given_up, Kokkos::subview(w.leaf_barrier, 1));
  return given_up != 0;
}

// System w.system of a and b into x: copy into the work space, then a panel of block_size
// columns at a time: factor it, apply its row swaps to the rest, solve for the block row of U,
// update the trailing matrix with one gemm. A signal is noticed between panels (`step` counts
// them across systems).
template <Form F = Form::OfSpace, class Scalar, class Space, class A, class B, class X, MINIAPP_KERNEL_UNIT>
void solve_system(const Space& space, Work<Scalar, Space>& w, const A& a, const B& b, const X& x, int block_size,
                  std::int64_t& step) {
  const int n = w.n();
  w.resident_arrivals = 0;
  if constexpr (kDeviceForm<F, Space>) {
    if (w.resident_leaf_rows <= n) w.allocate_resident_slots();
    copy_system_flat(space, w, a, b);
  } else {
    copy_system_rows(space, w, a, b);
  }
  for (int k0 = 0; k0 < n; k0 += block_size) {
    interruption_point(space, step++);
    const int k1 = std::min(k0 + block_size, n);
    factor_columns<F>(space, w, k0, k1);
    swap_rows<F>(space, w, k0, k1, 0, k0, false);
    swap_rows<F>(space, w, k0, k1, k1, n, true);
    if (k1 == n) break;
    lower_solve<F>(space, w, k0, k1, k1, n);
    // A22 -= L21 U12. After a zero pivot this computes with finite leftovers; nothing divides by it.
    update(space, w, k1, n, k0, k1, k1, n);
  }
  if constexpr (kDeviceForm<F, Space>) {
    solves_by_blocks(space, w, x);
    if (w.resident_arrivals > 0 && resident_leaf_given_up(w)) {
      // A resident leaf's teams were not all running: the system again, its leaves in the other forms.
      ++w.resident_fallbacks;
      const int resident_rows = w.resident_leaf_rows;
      w.resident_leaf_rows = std::numeric_limits<int>::max();
      solve_system<F>(space, w, a, b, x, block_size, step);
      w.resident_leaf_rows = resident_rows;
    }
  } else {
    solves(space, w, x);
  }
}

}  // namespace miniapp::solver::blocked
