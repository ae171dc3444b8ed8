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
#include "miniapp/core/unroll.hpp"
#include "miniapp/workloads/solver/blocked_solves.hpp"
#include "miniapp/workloads/solver/blocked_work.hpp"
#include "miniapp/workloads/solver/kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace miniapp::solver::blocked {

// Column j's pass over rows [j + 1, rows) of a leaf (after its pivot row j is in place): each
// row's multiplier l into column j, l times the pivot row off columns (j, width), and the largest
// |value| of column `next` (the next pivot's search) into best. Two forms, the same arithmetic.
// Looped (host spaces): the row's columns in a loop, the pivot row read at every step.
template <class Leaf, class Best, class Scalar>
KOKKOS_INLINE_FUNCTION void eliminate_row(const Leaf& leaf, int r, int j, int width, int next, Scalar inverse_pivot,
                                          Best& best) {
  const Scalar l = leaf(r, j) * inverse_pivot;
  leaf(r, j) = l;
  for (int c = j + 1; c < width; ++c) leaf(r, c) -= l * leaf(j, c);
  const Scalar v = compat::math::fabs(leaf(r, next));
  if (v > best.val) best.val = v, best.loc = r;
}

// In registers (devices): the pivot row u is read once per column by each thread, before its
// rows; a row's columns are all loaded before any is stored, unrolled over the leaf's kLeaf
// columns, so its loads are in flight together (the looped form cannot load the pivot row's next
// value before it has stored the row's last: for the compiler the two may be the same).
template <class Leaf, class Best, class Scalar>
KOKKOS_INLINE_FUNCTION void eliminate_row_registers(const Leaf& leaf, int r, int j, int width, int next,
                                                    Scalar inverse_pivot, const Scalar (&u)[kLeaf], Best& best) {
  Scalar row[kLeaf];  // indexed by unrolled counts only: in registers
  MINIAPP_UNROLL
  for (int c = 0; c < kLeaf; ++c) row[c] = c > j && c < width ? leaf(r, c) : Scalar(0);
  const Scalar l = leaf(r, j) * inverse_pivot;
  leaf(r, j) = l;
  Scalar v = compat::math::fabs(l);  // next == j: past the leaf's last column
  MINIAPP_UNROLL
  for (int c = 0; c < kLeaf; ++c)
    if (c > j && c < width) {
      row[c] -= l * u[c];
      leaf(r, c) = row[c];
      if (c == next) v = compat::math::fabs(row[c]);
    }
  if (v > best.val) best.val = v, best.loc = r;
}

// The table of a leaf's row swaps while factor_leaf_over_device runs (Work::leaf_moves): the
// number of entries, then (position, row) pairs, one for each position whose row has changed; a
// row is named by where it started in the leaf. At most two entries per column: 2 kLeaf.
template <class Moves>
KOKKOS_INLINE_FUNCTION int leaf_row_at(const Moves& moves, const int position) {
  const int count = moves(0);
  for (int k = 0; k < count; ++k)
    if (moves(1 + 2 * k) == position) return moves(2 + 2 * k);
  return position;
}

// Every row that has moved is in the table (a swap enters both of its positions).
template <class Moves>
KOKKOS_INLINE_FUNCTION int leaf_position_of(const Moves& moves, const int row) {
  const int count = moves(0);
  for (int k = 0; k < count; ++k)
    if (moves(2 + 2 * k) == row) return moves(1 + 2 * k);
  return row;
}

template <class Moves>
KOKKOS_INLINE_FUNCTION void leaf_place(const Moves& moves, const int position, const int row) {
  const int count = moves(0);
  for (int k = 0; k < count; ++k)
    if (moves(1 + 2 * k) == position) {
      moves(2 + 2 * k) = row;
      return;
    }
  moves(1 + 2 * count) = position;
  moves(2 + 2 * count) = row;
  moves(0) = count + 1;
}

// LAPACK's swap for column j with pivot `row`: the row at position j and `row` trade places.
// Returns the position `row` had (the pivot index of column j, relative to the leaf).
template <class Moves>
KOKKOS_INLINE_FUNCTION int leaf_swap_into(const Moves& moves, const int j, const int row) {
  const int q = leaf_position_of(moves, row);
  if (q != j) {
    const int displaced = leaf_row_at(moves, j);
    leaf_place(moves, j, row);
    leaf_place(moves, q, displaced);
  }
  return q;
}

// Columns [c0, c1), rows [c0, n), one column after the other by one team, on a compact copy
// (w.leaf): in place, every row of the leaf is on a page of its own (the rows of lu are n values
// apart), and each column's pass would miss the TLB once per row. The pass that eliminates
// column j also finds the pivot of column j + 1 (a team MaxLoc reduction), so each column costs
// one pass over the rows and one rendezvous (two when rows are swapped). Device forms
// (kDeviceForm) eliminate in registers (eliminate_row_registers).
template <Form F, class Scalar, class Space, MINIAPP_KERNEL_UNIT>
void factor_leaf_one_team(const Space& space, const Work<Scalar, Space>& w, int c0, int c1) {
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using MaxLoc = Kokkos::MaxLoc<Scalar, int>;
  using Best = typename MaxLoc::value_type;
  constexpr bool kRegisters = kDeviceForm<F, Space>;
  const auto info = w.info;
  const auto lu = w.lu;
  const auto leaf = w.leaf;
  const auto pivots = w.pivots;
  const auto scale = w.scale;
  const int s = w.system;
  const int rows = w.n() - c0;
  const int width = c1 - c0;
  const Scalar tiny_factor = tiny_pivot_factor<Scalar>(lu.extent(0));
  auto factor = KOKKOS_LAMBDA(const Member& team) {
    if (info(s) != 0) return;
    const Scalar tiny = tiny_factor * scale();
    Best pivot;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, 0, rows),
        [&](const int r, Best& best) {
          for (int c = 0; c < width; ++c) leaf(r, c) = lu(c0 + r, c0 + c);
          const Scalar v = compat::math::fabs(leaf(r, 0));
          if (v > best.val) best.val = v, best.loc = r;
        },
        MaxLoc(pivot));
    for (int j = 0; j < width; ++j) {
      if (!(pivot.val > tiny)) {
        Kokkos::single(Kokkos::PerTeam(team), [&]() { info(s) = c0 + j + 1; });
        return;
      }
      const int p = pivot.loc;
      Kokkos::single(Kokkos::PerTeam(team), [&]() { pivots(c0 + j) = c0 + p; });
      if (p != j) {
        // The reduction that found p was a rendezvous: every row's update is visible here.
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, width), [&](const int c) {
          const Scalar t = leaf(j, c);
          leaf(j, c) = leaf(p, c);
          leaf(p, c) = t;
        });
        team.team_barrier();
      }
      const Scalar inverse_pivot = Scalar(1) / leaf(j, j);
      const int next = j + 1 < width ? j + 1 : j;  // past the leaf's last column the search is idle
      Scalar u[kLeaf];
      MINIAPP_UNROLL
      for (int c = 0; c < kLeaf; ++c) u[c] = kRegisters && c > j && c < width ? leaf(j, c) : Scalar(0);
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, j + 1, rows),
          [&](const int r, Best& best) {
            if (kRegisters) {
              eliminate_row_registers(leaf, r, j, width, next, inverse_pivot, u, best);
            } else {
              eliminate_row(leaf, r, j, width, next, inverse_pivot, best);
            }
          },
          MaxLoc(pivot));
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, rows), [&](const int r) {
      for (int c = 0; c < width; ++c) lu(c0 + r, c0 + c) = leaf(r, c);
    });
  };
  // no more threads than the leaf's rows, in whole warps
  const int threads = std::min(w.panel_threads, std::max(32, (rows + 31) / 32 * 32));
  Kokkos::parallel_for("solver::dense-panel", Policy(space, 1, whole_space_team(space, factor, threads)), factor);
}

// Devices, leaves of Work::wide_leaf_rows rows or more: the same elimination (the same
// arithmetic, so the same pivots and factors), over the whole device, a launch per column. Rows
// are not moved while the leaf is factored: column j's pivot is searched among the rows not yet
// chosen (leaf_chosen), the others are eliminated against it where they are, and the swaps
// LAPACK would make are kept in a table (leaf_moves) by the pivot row's thread; the last launch
// writes the leaf back in LAPACK's order. Each column's launch takes the pivot the launch before
// it found (a MaxLoc into a device View: no wait on the host) and searches the next column.
// A tiny pivot: its column's launch sets info (no other thread reads info there) and hands on
// kStopped, which the later launches pass on without work; nothing is written back, as in one team.
template <class Scalar, class Space, MINIAPP_KERNEL_UNIT>
void factor_leaf_over_device(const Space& space, const Work<Scalar, Space>& w, int c0, int c1) {
  using Range = Kokkos::RangePolicy<Space>;
  using MaxLoc = Kokkos::MaxLoc<Scalar, int, typename Space::memory_space>;
  using Best = typename MaxLoc::value_type;
  constexpr int kStopped = -1;  // a pivot's loc no row has
  const auto info = w.info;
  const auto lu = w.lu;
  const auto leaf = w.leaf;
  const auto pivots = w.pivots;
  const auto scale = w.scale;
  const auto chosen = w.leaf_chosen;
  const auto moves = w.leaf_moves;
  const int s = w.system;
  const int rows = w.n() - c0;
  const int width = c1 - c0;
  const Scalar tiny_factor = tiny_pivot_factor<Scalar>(lu.extent(0));
  Kokkos::parallel_reduce(
      "solver::dense-leaf-copy", Range(space, 0, rows),
      KOKKOS_LAMBDA(const int r, Best& best) {
        if (info(s) != 0) {
          if (r == 0) best.val = Scalar(0), best.loc = kStopped;
          return;
        }
        for (int c = 0; c < width; ++c) leaf(r, c) = lu(c0 + r, c0 + c);
        chosen(r) = kLeaf;
        if (r == 0) moves(0) = 0;
        const Scalar v = compat::math::fabs(leaf(r, 0));
        if (v > best.val) best.val = v, best.loc = r;
      },
      MaxLoc(w.leaf_best[0]));
  for (int j = 0; j < width; ++j) {
    const auto found = w.leaf_best[j % 2];
    const int next = j + 1 < width ? j + 1 : j;  // past the leaf's last column the search is idle
    Kokkos::parallel_reduce(
        "solver::dense-leaf-column", Range(space, 0, rows),
        KOKKOS_LAMBDA(const int r, Best& best) {
          const Best pivot = found();
          if (pivot.loc == kStopped || !(pivot.val > tiny_factor * scale())) {
            if (r != 0) return;
            if (pivot.loc != kStopped) info(s) = c0 + j + 1;
            best.val = Scalar(0), best.loc = kStopped;
            return;
          }
          const int p = pivot.loc;
          if (r == p) {
            chosen(r) = j;
            pivots(c0 + j) = c0 + leaf_swap_into(moves, j, r);
            return;
          }
          if (chosen(r) < j) return;
          Scalar u[kLeaf];
          MINIAPP_UNROLL
          for (int c = 0; c < kLeaf; ++c) u[c] = c > j && c < width ? leaf(p, c) : Scalar(0);
          eliminate_row_registers(leaf, r, j, width, next, Scalar(1) / leaf(p, j), u, best);
        },
        MaxLoc(w.leaf_best[(j + 1) % 2]));
  }
  const std::int64_t values = static_cast<std::int64_t>(rows) * width;
  Kokkos::parallel_for(
      "solver::dense-leaf-back", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, values),
      KOKKOS_LAMBDA(const std::int64_t t) {
        if (info(s) != 0) return;
        const int i = static_cast<int>(t / width);
        const int c = static_cast<int>(t - static_cast<std::int64_t>(i) * width);
        lu(c0 + i, c0 + c) = leaf(leaf_row_at(moves, i), c);
      });
}

// A leaf by the space's form: on devices tall leaves over the whole device, the rest in one team.
template <Form F, class Scalar, class Space>
void factor_leaf(const Space& space, const Work<Scalar, Space>& w, int c0, int c1) {
  if constexpr (kDeviceForm<F, Space>) {
    if (w.n() - c0 >= w.wide_leaf_rows) return factor_leaf_over_device(space, w, c0, c1);
  }
  factor_leaf_one_team<F>(space, w, c0, c1);
}

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
        // then), all eight loads before the stores. One swap after another, each waited on a load
        // and a store, took 25 us a launch at n = 4096 on the H200, a thread per column. (The host
        // form swaps whole rows of its 64-column chunk, contiguous: grouped it was 4% slower.)
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
        if (i == 0) info(s) = 0;
      },
      Kokkos::Max<Scalar, typename Space::memory_space>(w.scale));
}

// Device form: a value per thread, neighbours in a row (the row per thread above read values n
// apart across a warp: 1.5 ms at n = 4096 on the H200, where the bytes take 64 us).
template <class Scalar, class Space, class A, class B, MINIAPP_KERNEL_UNIT>
void copy_system_flat(const Space& space, const Work<Scalar, Space>& w, const A& a, const B& b) {
  const auto info = w.info;
  const auto lu = w.lu;
  const auto rhs = w.rhs;
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
        if (t == 0) info(s) = 0;
      },
      Kokkos::Max<Scalar, typename Space::memory_space>(w.scale));
}

// System w.system of a and b into x: copy into the work space, then a panel of block_size
// columns at a time: factor it, apply its row swaps to the rest, solve for the block row of U,
// update the trailing matrix with one gemm. A signal is noticed between panels (`step` counts
// them across systems).
template <Form F = Form::OfSpace, class Scalar, class Space, class A, class B, class X, MINIAPP_KERNEL_UNIT>
void solve_system(const Space& space, Work<Scalar, Space>& w, const A& a, const B& b, const X& x, int block_size,
                  std::int64_t& step) {
  const int n = w.n();
  if constexpr (kDeviceForm<F, Space>) {
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
  } else {
    solves(space, w, x);
  }
}

}  // namespace miniapp::solver::blocked
