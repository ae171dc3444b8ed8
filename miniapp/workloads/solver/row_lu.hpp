#pragma once
// batched-thread's row mapping, prepared for GPUs at orders up to NM (32: a warp a system): one
// Kokkos thread per system, its vector lanes each holding rows lane, lane + L, ... of [A | b] in
// registers for the whole solve (one row a lane on a GPU, L = NM; every row on the one lane of a
// host thread). Gauss-Jordan elimination with partial pivoting, rows never swapped. Step k: each
// lane offers its largest |a_ik| among its rows not yet pivots, a MaxLoc reduction over the lanes
// names the pivot row, its lane writes that row's columns from k (and b) to the thread's scratch,
// and every other row, the earlier pivots' as well, takes its multiple of it away. After the last
// step each pivot row holds only its diagonal and its b: x is their quotient, with no back
// substitution. On a GPU the earlier pivots' rows cost no more time than leaving their lanes idle
// would, and a back substitution would be n more steps that index a row by the step (registers
// cannot be: the compiler put the rows in local memory). The lanes mapping (device_lu.hpp) holds
// the system in scratch and reads every column down every row below the pivot at every step
// (three scratch accesses a row); the column mapping (column_lu.hpp) holds it in registers too,
// but a column a thread, so each step is one thread's serial pivot search and two team barriers.
// Here a step is the lanes' reduction, one scratch store a column by the pivot's lane and one
// load a column by each other lane, and the lanes of a thread step together with no barrier:
// Kokkos ends each ThreadVectorRange loop with the thread's lanes in step (a warp's sync on CUDA),
// which orders the pivot row's stores before the others' loads, and those loads before the next
// step's stores.

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/unroll.hpp"
#include "miniapp/workloads/solver/column_lu.hpp"
#include "miniapp/workloads/solver/params.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace miniapp::solver {

// A row's step while it is still in play, and for the padding's rows (at or past the order).
inline constexpr int kRowInPlay = -1, kRowPadding = -2;

// System s by the lanes of `thread`, held as rows of L lanes (see the top of this file); u: NM + 1
// values of the thread's scratch (the pivot row from column k, then x).
template <int NM, int L, class Member, class A, class B, class X, class Info, class Scalar>
KOKKOS_INLINE_FUNCTION void solve_on_rows(const Member& thread, const A& a, const B& b, const X& x, const Info& info,
                                          Scalar* const u, const std::size_t s, const int n,
                                          const Scalar tiny_factor) {
  static_assert(NM % L == 0, "every lane holds the same number of rows");
  constexpr int R = NM / L;
  Scalar row[R][NM + 1];  // column NM: b
  Scalar diag[R];         // a pivot row's value in its pivot's column
  int step[R];            // the step a row was the pivot at, or kRowInPlay, kRowPadding
  Scalar scale = 0;
  Kokkos::parallel_reduce(
      Kokkos::ThreadVectorRange(thread, L),
      [&](const int lane, Scalar& lane_max) {
        MINIAPP_UNROLL
        for (int r = 0; r < R; ++r) {
          const int i = lane + r * L;
          step[r] = i < n ? kRowInPlay : kRowPadding;
          diag[r] = Scalar(1);
          MINIAPP_UNROLL
          for (int j = 0; j < NM; ++j) {
            row[r][j] = i < n && j < n ? a(s, i, j) : Scalar(0);
            lane_max = larger_of(lane_max, compat::math::fabs(row[r][j]));
          }
          row[r][NM] = i < n ? b(s, i) : Scalar(0);
        }
      },
      Kokkos::Max<Scalar>(scale));
  const Scalar tiny = tiny_factor * scale;
  int result = 0;
  MINIAPP_UNROLL
  for (int k = 0; k < NM; ++k) {
    if (k >= n || result != 0) continue;  // the same on every lane: its lanes go on together
    using MaxLoc = Kokkos::MaxLoc<Scalar, int>;
    typename MaxLoc::value_type pivot;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(thread, L),
        [&](const int lane, typename MaxLoc::value_type& best) {
          MINIAPP_UNROLL
          for (int r = 0; r < R; ++r) {
            const Scalar v = compat::math::fabs(row[r][k]);
            if (step[r] == kRowInPlay && v > best.val) {
              best.val = v;
              best.loc = lane + r * L;
            }
          }
        },
        MaxLoc(pivot));
    if (!(pivot.val > tiny)) {
      result = k + 1;
      continue;
    }
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(thread, L), [&](const int lane) {
      MINIAPP_UNROLL
      for (int r = 0; r < R; ++r) {
        if (lane + r * L != pivot.loc) continue;
        step[r] = k;
        diag[r] = row[r][k];
        MINIAPP_UNROLL
        for (int j = k; j <= NM; ++j) u[j] = row[r][j];
      }
    });
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(thread, L), [&](const int) {
      const Scalar inverse_pivot = Scalar(1) / u[k];
      MINIAPP_UNROLL
      for (int r = 0; r < R; ++r) {
        if (step[r] == k || step[r] == kRowPadding) continue;
        const Scalar l = row[r][k] * inverse_pivot;
        MINIAPP_UNROLL
        for (int j = k + 1; j <= NM; ++j) row[r][j] -= l * u[j];
      }
    });
  }
  Kokkos::parallel_for(Kokkos::ThreadVectorRange(thread, L), [&](const int) {
    MINIAPP_UNROLL
    for (int r = 0; r < R; ++r)
      if (result == 0 && step[r] >= 0) u[step[r]] = row[r][NM] / diag[r];
  });
  Kokkos::parallel_for(Kokkos::ThreadVectorRange(thread, n),
                       [&](const int i) { x(s, i) = result == 0 ? u[i] : Scalar(0); });
  Kokkos::single(Kokkos::PerThread(thread), [&]() { info(s) = result; });
}

// Every system of the batch by the row mapping, rows padded to NM >= n: NM lanes a system on
// device spaces (at most the space's vector length), 128 lanes a team; one lane, one system a
// team, on host spaces.
template <int NM, class Space, class A, class B, class X, class Info, MINIAPP_KERNEL_UNIT>
void batched_thread_rows(const Space& space, const A& a, const B& b, const X& x, const Info& info) {
  using Scalar = typename A::value_type;
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Shared = Kokkos::View<Scalar*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr int kLanes = is_host_space<Space>() ? 1 : NM;
  constexpr int kPerTeam = is_host_space<Space>() ? 1 : (128 / kLanes > 0 ? 128 / kLanes : 1);
  const int n = static_cast<int>(a.extent(1));
  if (n > NM)
    throw std::invalid_argument("solver: the row mapping pads rows to " + std::to_string(NM) +
                                ", fewer than the order " + std::to_string(n));
  const std::size_t systems = a.extent(0);
  const Scalar tiny_factor = tiny_pivot_factor<Scalar>(a.extent(1));
  const int teams = static_cast<int>((systems + kPerTeam - 1) / kPerTeam);
  Policy policy(space, teams, kPerTeam, kLanes);
  policy.set_scratch_size(0, Kokkos::PerThread(Shared::shmem_size(NM + 1)));
  Kokkos::parallel_for(
      "solver::batched-thread-rows", policy, KOKKOS_LAMBDA(const Member& thread) {
        const std::size_t s = std::size_t(thread.league_rank()) * kPerTeam + thread.team_rank();
        if (s >= systems) return;  // the last team's spare threads: no team-wide step follows
        const Shared u(thread.thread_scratch(0), NM + 1);
        solve_on_rows<NM, kLanes>(thread, a, b, x, info, u.data(), s, n, tiny_factor);
      });
}

}  // namespace miniapp::solver
