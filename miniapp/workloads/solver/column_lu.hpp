#pragma once
// batched-thread's column mapping, its GPU form for orders kRegisterOrderMax < n <=
// kColumnOrderMax (device_lu.hpp has the others): a group of T threads per system, thread t of a
// group holding columns t, t + T, ... of A (NM / T of them, rows padded to NM with zeros) in its
// registers for the whole solve. Step k: the owner of column k searches it for the pivot, swaps
// the pivot into row k and puts the multipliers, the pivot's row and the swapped right-hand side
// in the group's scratch; after a barrier every thread swaps and updates its own columns right of
// k (one fma a row) and its share of the right-hand side. Back substitution: the owner of column k
// divides and updates the right-hand side above k with its column, a barrier a column. Nothing
// of A goes back to memory after the copy in, and the pivot search is one thread's compares: the
// lanes mapping took every column down every row below the pivot in scratch at every step (three
// scratch accesses a row) and searched by a shuffle reduction. The G groups of a team step
// together (team barriers): a singular system, or a group past the batch's end, keeps stepping
// idle. Plain Kokkos: the host spaces run it with one or two threads (the unit tests).

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/unroll.hpp"
#include "miniapp/workloads/solver/params.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace miniapp::solver {

// One group's share of its team's scratch: 2 NM + T values and two ints.
template <class Scalar>
struct ColumnGroup {
  Scalar* l;          // the multipliers of the current step
  Scalar* rhs;        // b, then y, then x
  Scalar* maxima;     // each thread's max|A|
  int* pivot_row;     // the current step's
  int* result;        // 0, k + 1 for a pivot too small at column k, -1 a group past the batch
};

// The larger of two values, the held one where v is NaN: the column and the lanes mappings take
// their max|A| with it.
template <class Scalar>
KOKKOS_FORCEINLINE_FUNCTION Scalar larger_of(const Scalar held, const Scalar v) {
  return v > held ? v : held;  // NaN: held
}

// Rows k and p (p > k, or p == k) of one column swapped by selects: registers have no index.
template <int NM, class Scalar>
KOKKOS_FORCEINLINE_FUNCTION void swap_rows(Scalar (&column)[NM], const int k, const int p) {
  MINIAPP_UNROLL
  for (int i = k + 1; i < NM; ++i) {
    const bool swap = i == p;
    const Scalar held = column[k];
    column[k] = swap ? column[i] : held;
    column[i] = swap ? held : column[i];
  }
}

// The owner's part of step k: the pivot of its column, the swap, the multipliers and the
// right-hand side's swap, or the result that names a pivot too small.
template <int NM, class Scalar>
KOKKOS_FORCEINLINE_FUNCTION void pivot_step(Scalar (&own)[NM], const int k, const int n, const Scalar tiny,
                                            const ColumnGroup<Scalar>& group) {
  Scalar best = compat::math::fabs(own[k]);
  int p = k;
  MINIAPP_UNROLL
  for (int i = k + 1; i < NM; ++i) {
    const Scalar v = compat::math::fabs(own[i]);
    if (i < n && v > best) best = v, p = i;
  }
  if (!(best > tiny)) {
    *group.result = k + 1;
    return;
  }
  swap_rows(own, k, p);
  const Scalar inverse_pivot = Scalar(1) / own[k];
  MINIAPP_UNROLL
  for (int i = k + 1; i < NM; ++i) group.l[i] = own[i] * inverse_pivot;
  *group.pivot_row = p;
  const Scalar r = group.rhs[k];
  group.rhs[k] = group.rhs[p];
  group.rhs[p] = r;
}

// Every thread's part of step k: its columns right of k swapped and updated, its rows of the
// right-hand side below k updated.
template <int NM, int T, int C, class Scalar>
KOKKOS_FORCEINLINE_FUNCTION void update_step(Scalar (&col)[C][NM], const int k, const int n, const int t,
                                             const ColumnGroup<Scalar>& group) {
  const int p = *group.pivot_row;
  MINIAPP_UNROLL
  for (int c = 0; c < C; ++c) {
    const int j = t + c * T;
    if (j <= k || j >= n) continue;
    swap_rows(col[c], k, p);
    const Scalar u = col[c][k];
    MINIAPP_UNROLL
    for (int i = k + 1; i < NM; ++i) col[c][i] -= group.l[i] * u;
  }
  const Scalar rk = group.rhs[k];
  for (int i = k + 1 + t; i < n; i += T) group.rhs[i] -= group.l[i] * rk;
}

// System s (active: within the batch) by group thread t of `team`; see the top of this file.
template <int NM, int T, class Member, class A, class B, class X, class Info, class Scalar>
KOKKOS_INLINE_FUNCTION void solve_on_columns(const Member& team, const A& a, const B& b, const X& x, const Info& info,
                                             const ColumnGroup<Scalar>& group, const std::size_t s, const int t,
                                             const int n, const Scalar tiny_factor) {
  static_assert(NM % T == 0, "every thread of a group holds the same number of columns");
  constexpr int C = NM / T;
  const bool active = s < a.extent(0);
  Scalar col[C][NM];
  Scalar thread_max = 0;
  MINIAPP_UNROLL
  for (int c = 0; c < C; ++c) {
    const int j = t + c * T;
    MINIAPP_UNROLL
    for (int i = 0; i < NM; ++i) {
      col[c][i] = active && i < n && j < n ? a(s, i, j) : Scalar(0);
      thread_max = larger_of(thread_max, compat::math::fabs(col[c][i]));
    }
  }
  for (int i = t; i < NM; i += T) group.rhs[i] = active && i < n ? b(s, i) : Scalar(0);
  group.maxima[t] = thread_max;
  if (t == 0) *group.result = active ? 0 : -1;
  team.team_barrier();
  Scalar scale = 0;
  for (int u = 0; u < T; ++u) scale = larger_of(scale, group.maxima[u]);
  const Scalar tiny = tiny_factor * scale;
  MINIAPP_UNROLL
  for (int k = 0; k < NM; ++k) {
    if (k >= n) break;  // n is the whole team's: every thread leaves here
    if (t == k % T && *group.result == 0) pivot_step(col[k / T], k, n, tiny, group);
    team.team_barrier();
    if (*group.result == 0) update_step<NM, T>(col, k, n, t, group);
    team.team_barrier();  // the next owner overwrites l and swaps the right-hand side
  }
  const bool solved = *group.result == 0;
  MINIAPP_UNROLL
  for (int k = NM - 1; k >= 0; --k) {
    if (k >= n) continue;
    if (solved && t == k % T) {
      const Scalar* const own = col[k / T];
      const Scalar xk = group.rhs[k] / own[k];
      group.rhs[k] = xk;
      MINIAPP_UNROLL
      for (int i = 0; i < k; ++i) group.rhs[i] -= own[i] * xk;
    }
    team.team_barrier();
  }
  if (!active) return;
  for (int i = t; i < n; i += T) x(s, i) = solved ? group.rhs[i] : Scalar(0);
  if (t == 0) info(s) = *group.result;
}

// Every system of the batch by the column mapping: G groups of T threads to a team (vector
// length 1), rows padded to NM >= n.
template <int NM, int T, int G, class Space, class A, class B, class X, class Info, MINIAPP_KERNEL_UNIT>
void batched_thread_columns(const Space& space, const A& a, const B& b, const X& x, const Info& info) {
  using Scalar = typename A::value_type;
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Shared = Kokkos::View<Scalar*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Flags = Kokkos::View<int*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int n = static_cast<int>(a.extent(1));
  if (n > NM)
    throw std::invalid_argument("solver: the column mapping pads rows to " + std::to_string(NM) +
                                ", fewer than the order " + std::to_string(n));
  const Scalar tiny_factor = tiny_pivot_factor<Scalar>(a.extent(1));
  constexpr int kGroupValues = 2 * NM + T;
  const int teams = static_cast<int>((a.extent(0) + G - 1) / G);
  Policy policy(space, teams, T * G);
  policy.set_scratch_size(0, Kokkos::PerTeam(Shared::shmem_size(G * kGroupValues) + Flags::shmem_size(2 * G)));
  Kokkos::parallel_for(
      "solver::batched-thread-columns", policy, KOKKOS_LAMBDA(const Member& team) {
        const Shared shared(team.team_scratch(0), G * kGroupValues);
        const Flags flags(team.team_scratch(0), 2 * G);
        const int g = team.team_rank() / T;
        Scalar* const values = shared.data() + g * kGroupValues;
        const ColumnGroup<Scalar> group{values, values + NM, values + 2 * NM, flags.data() + 2 * g,
                                        flags.data() + 2 * g + 1};
        const std::size_t s = static_cast<std::size_t>(team.league_rank()) * G + static_cast<std::size_t>(g);
        solve_on_columns<NM, T>(team, a, b, x, info, group, s, team.team_rank() % T, n, tiny_factor);
      });
}

// The column mapping as GPUs run it: a warp per team, one thread per column, order n padded to
// 16, two systems a team. Padded to 32 (one system a warp) it was slower than the lanes mapping
// on the H200 (params.hpp), so an order above 16 is refused here like any order past the padding.
template <class Space, class A, class B, class X, class Info, MINIAPP_KERNEL_UNIT>
void batched_thread_columns(const Space& space, const A& a, const B& b, const X& x, const Info& info) {
  static_assert(kColumnOrderMax == 16, "orders padded to 16, two systems a warp");
  batched_thread_columns<16, 16, 2>(space, a, b, x, info);
}

}  // namespace miniapp::solver
