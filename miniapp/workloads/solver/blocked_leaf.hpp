#pragma once
// dense-blocked's panel leaves: the columns of a leaf of the recursive panel factorisation
// eliminated one after the other, in one team (host spaces, and short leaves on devices) or over
// the whole device a launch per column (tall leaves on devices); blocked_leaf_resident.hpp is the
// third form and the choice among them, blocked_lu.hpp the rest of the factorisation.

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/unroll.hpp"
#include "miniapp/workloads/solver/blocked_work.hpp"
#include "miniapp/workloads/solver/kernels.hpp"

#include <algorithm>
#include <cstdint>

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

// The pivot row's columns right of j, read from row p of the leaf into u (zero elsewhere): what
// both device forms hand to eliminate_row_registers, the one team after its swap (p = j), the
// whole device with rows in place (p where the pivot lies). The same values, so the same x.
template <class Leaf, class Scalar>
KOKKOS_INLINE_FUNCTION void load_pivot_row(const Leaf& leaf, int p, int j, int width, Scalar (&u)[kLeaf]) {
  MINIAPP_UNROLL
  for (int c = 0; c < kLeaf; ++c) u[c] = c > j && c < width ? leaf(p, c) : Scalar(0);
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
// leaf_lookup<kAtPosition>(p): the row at position p; leaf_lookup<kOfRow>(r): the position of
// row r. Either is its argument where the table has no entry for it: every row that has moved is
// in the table (a swap enters both of its positions).
inline constexpr int kAtPosition = 1, kOfRow = 2;  // the field of a pair that is looked up
template <int Key, class Moves>
KOKKOS_INLINE_FUNCTION int leaf_lookup(const Moves& moves, const int value) {
  const int count = moves(0);
  for (int k = 0; k < count; ++k)
    if (moves(Key + 2 * k) == value) return moves(3 - Key + 2 * k);
  return value;
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
  const int q = leaf_lookup<kOfRow>(moves, row);
  if (q != j) {
    const int displaced = leaf_lookup<kAtPosition>(moves, j);
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
      Scalar u[kLeaf] = {};
      if (kRegisters) load_pivot_row(leaf, j, j, width, u);
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
  // the Views each kernel uses, not the work space whole (its size would put the kernels'
  // arguments in constant memory, whose launches wait on the host for the previous one's end)
  const auto info = w.info;
  const auto lu = w.lu;
  const auto leaf = w.leaf;
  const auto chosen = w.leaf_chosen;
  const auto moves = w.leaf_moves;
  const auto pivots = w.pivots;
  const auto scale = w.scale;
  const int s = w.system;
  const int rows = w.n() - c0;
  const int width = c1 - c0;
  const Scalar tiny_factor = tiny_pivot_factor<Scalar>(w.lu.extent(0));
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
          load_pivot_row(leaf, p, j, width, u);
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
        lu(c0 + i, c0 + c) = leaf(leaf_lookup<kAtPosition>(moves, i), c);
      });
}

}  // namespace miniapp::solver::blocked
