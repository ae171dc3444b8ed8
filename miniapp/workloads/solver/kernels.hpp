#pragma once
// The solver's kernels, written once for every execution space: input generation, and LU with
// partial pivoting of a batch of systems, one system per thread, per team or through
// KokkosBatched (the blocked LU of one large system is in blocked_lu.hpp). Every routine records
// the first zero (or tiny) pivot as LAPACK's info does, column + 1, and then stops, so a singular
// system never turns into inf/NaN. Free functions: CUDA extended lambdas may not live in private
// member functions.

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/kokkos_kernels_compat.hpp"
#include "miniapp/core/random.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/workloads/solver/device_lu.hpp"
#include "miniapp/workloads/solver/host_lu.hpp"
#include "miniapp/workloads/solver/params.hpp"
#include "miniapp/workloads/solver/row_lu.hpp"

#include <cstdint>
#include <limits>

namespace miniapp::solver {

// Pure functions of (seed, system, row, column), so host and device generation agree exactly.
KOKKOS_INLINE_FUNCTION double matrix_entry(MatrixKind kind, std::uint64_t seed, std::uint64_t n, std::uint64_t s,
                                           std::uint64_t i, std::uint64_t j) {
  if (kind == MatrixKind::Singular) {
    if (n == 1) return 0.0;
    if (i == n - 1) i = 0;
  }
  double v = uniform01(seed, (s * n + i) * n + j);
  if (kind == MatrixKind::DiagonallyDominant && i == j) v += static_cast<double>(n);
  return v;
}

KOKKOS_INLINE_FUNCTION double rhs_entry(std::uint64_t seed, std::uint64_t n, std::uint64_t s, std::uint64_t i) {
  return uniform01(~seed, s * n + i);  // a stream of its own, independent of A's
}

// Systems first, first + 1, ... of the batch into a(0), a(1), ...: the whole batch, or one MPI
// rank's part of it (the same values wherever a system is made).
template <class A, class B>
void generate_on_host(MatrixKind kind, const A& a, const B& b, std::uint64_t seed, std::size_t first = 0) {
  using Scalar = typename A::value_type;
  const std::size_t systems = a.extent(0), n = a.extent(1);
  for (std::size_t s = 0; s < systems; ++s)
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) a(s, i, j) = static_cast<Scalar>(matrix_entry(kind, seed, n, first + s, i, j));
      b(s, i) = static_cast<Scalar>(rhs_entry(seed, n, first + s, i));
    }
}

template <class Space, class A, class B, MINIAPP_KERNEL_UNIT>
void generate(const Space& space, MatrixKind kind, const A& a, const B& b, std::uint64_t seed, std::uint64_t first = 0) {
  using Scalar = typename A::value_type;
  const auto systems = static_cast<std::int64_t>(a.extent(0));
  const std::uint64_t n = a.extent(1);
  Kokkos::parallel_for(
      "solver::generate", Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {0, 0}, {systems, std::int64_t(n)}),
      KOKKOS_LAMBDA(const std::int64_t s, const std::int64_t i) {
        const std::uint64_t system = first + std::uint64_t(s);
        for (std::uint64_t j = 0; j < n; ++j)
          a(s, i, j) = static_cast<Scalar>(matrix_entry(kind, seed, n, system, std::uint64_t(i), j));
        b(s, i) = static_cast<Scalar>(rhs_entry(seed, n, system, std::uint64_t(i)));
      });
}

// Whether a pivot u of the factors counts as zero against `tiny`: not above it, or not finite.
template <class Scalar>
KOKKOS_INLINE_FUNCTION bool is_tiny_pivot(const Scalar u, const Scalar tiny) {
  return !(compat::math::fabs(u) > tiny) || !compat::math::isfinite(u);
}

// Copies system s of a and b into one system's work slices m (n x n) and r (n); returns max|A|.
template <class A, class B, class M, class R>
KOKKOS_INLINE_FUNCTION typename A::value_type copy_system(const A& a, const B& b, const std::size_t s, const M& m,
                                                          const R& r) {
  using Scalar = typename A::value_type;
  const int n = static_cast<int>(a.extent(1));
  Scalar scale = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      m(i, j) = a(s, i, j);
      const Scalar v = compat::math::fabs(m(i, j));
      if (v > scale) scale = v;
    }
    r(i) = b(s, i);
  }
  return scale;
}

// Solves a x = b in place (b becomes x) with partial pivoting; `a` and `b` are one system's
// n x n and n slices. Returns 0, or the column + 1 of the first pivot not above `tiny`.
template <class Matrix, class Vector, class Scalar>
KOKKOS_INLINE_FUNCTION int lu_solve_one_thread(const Matrix& a, const Vector& b, int n, Scalar tiny) {
  for (int k = 0; k < n; ++k) {
    int p = k;
    Scalar best = compat::math::fabs(a(k, k));
    for (int i = k + 1; i < n; ++i) {
      const Scalar v = compat::math::fabs(a(i, k));
      if (v > best) best = v, p = i;
    }
    if (!(best > tiny)) return k + 1;
    if (p != k) {
      // Columns left of k hold multipliers nobody reads again: b is eliminated alongside.
      for (int j = k; j < n; ++j) {
        const Scalar t = a(k, j);
        a(k, j) = a(p, j);
        a(p, j) = t;
      }
      const Scalar t = b(k);
      b(k) = b(p);
      b(p) = t;
    }
    const Scalar inverse_pivot = Scalar(1) / a(k, k);
    for (int i = k + 1; i < n; ++i) {
      const Scalar l = a(i, k) * inverse_pivot;
      for (int j = k + 1; j < n; ++j) a(i, j) -= l * a(k, j);
      b(i) -= l * b(k);
    }
  }
  for (int k = n - 1; k >= 0; --k) {
    Scalar s = b(k);
    for (int j = k + 1; j < n; ++j) s -= a(k, j) * b(j);
    b(k) = s / a(k, k);
  }
  return 0;
}

// The same for one team: `m` is the augmented n x (n + 1) matrix [A | b] in team scratch; the
// pivot search is a team MaxLoc reduction, rows are eliminated across the team. On return the
// last column of m holds x (when the result is 0).
template <class Member, class Matrix, class Scalar>
KOKKOS_INLINE_FUNCTION int lu_solve_one_team(const Member& team, const Matrix& m, int n, Scalar tiny) {
  for (int k = 0; k < n; ++k) {
    const auto pivot = column_pivot(Kokkos::TeamThreadRange(team, k, n), m, k);
    if (!(pivot.val > tiny)) return k + 1;  // the same value on every member: all leave together
    const int p = pivot.loc;
    if (p != k) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k, n + 1), [&](const int j) {
        const Scalar t = m(k, j);
        m(k, j) = m(p, j);
        m(p, j) = t;
      });
      team.team_barrier();
    }
    const Scalar inverse_pivot = Scalar(1) / m(k, k);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k + 1, n), [&](const int i) {
      const Scalar l = m(i, k) * inverse_pivot;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, k + 1, n + 1), [&](const int j) { m(i, j) -= l * m(k, j); });
    });
    team.team_barrier();
  }
  // Column-oriented back substitution: x_k is final once the rows below have been applied.
  for (int k = n - 1; k >= 0; --k) {
    const Scalar xk = m(k, n) / m(k, k);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, k), [&](const int i) { m(i, n) -= m(i, k) * xk; });
    team.team_barrier();
    // Nothing reads m(k, n) again before the copy-out, after the barrier below.
    Kokkos::single(Kokkos::PerTeam(team), [&]() { m(k, n) = xk; });
  }
  team.team_barrier();
  return 0;
}

// System s by one team: [A | b] into the team's scratch m with max|A|, solved, x and info out.
// Host (a team of one thread, as the OpenMP and Serial spaces run it): raw rows, lu_solve_rows.
// A function, not the kernel's lambda: nvcc refuses an extended lambda that first captures a
// variable inside `if constexpr`.
template <bool Host, class Member, class A, class B, class X, class Info, class Matrix, class Scalar>
KOKKOS_INLINE_FUNCTION void solve_team_system(const Member& team, const A& a, const B& b, const X& x, const Info& info,
                                              const int s, const Matrix& m, const int n, const Scalar tiny_factor) {
#if MINIAPP_HOST_SIMD
  if constexpr (Host) {
    if (team.team_size() == 1) {
      solve_on_rows(a, b, x, info, s, m.data(), static_cast<int>(m.stride(0)), n, tiny_factor);
      return;
    }
  }
#endif
  Scalar scale = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, n),
      [&](const int i, Scalar& team_max) {
        Scalar row_max = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, n),
            [&](const int j, Scalar& lane_max) {
              m(i, j) = a(s, i, j);
              const Scalar v = compat::math::fabs(m(i, j));
              if (v > lane_max) lane_max = v;
            },
            Kokkos::Max<Scalar>(row_max));
        Kokkos::single(Kokkos::PerThread(team), [&]() { m(i, n) = b(s, i); });
        if (row_max > team_max) team_max = row_max;
      },
      Kokkos::Max<Scalar>(scale));
  team.team_barrier();
  const int result = lu_solve_one_team(team, m, n, tiny_factor * scale);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int i) { x(s, i) = result == 0 ? m(i, n) : Scalar(0); });
  Kokkos::single(Kokkos::PerTeam(team), [&]() { info(s) = result; });
}

// System s by one thread, on slice `slot` of the work Views lu and rhs. On a host space the slice
// of lu is [A | b] as in batched-team's scratch (system_columns), solved on raw rows
// (solve_on_rows; rhs is left unused): with b in rhs, 8 x 8 systems took 1.6x and 32 x 32 1.1x
// the time on 2 threads of a Xeon. A function, not the kernel's lambda (nvcc and `if constexpr`,
// as above).
template <bool Host, class A, class B, class X, class Info, class LU, class Rhs, class Scalar>
KOKKOS_INLINE_FUNCTION void solve_thread_system(const A& a, const B& b, const X& x, const Info& info, const LU& lu,
                                                const Rhs& rhs, const std::size_t s, const std::size_t slot,
                                                const int n, const Scalar tiny_factor) {
#if MINIAPP_HOST_SIMD
  if constexpr (Host) {
    solve_on_rows(a, b, x, info, static_cast<int>(s), &lu(slot, 0, 0), static_cast<int>(lu.stride(1)), n, tiny_factor);
    return;
  }
#endif
  const auto m = Kokkos::subview(lu, slot, Kokkos::ALL, Kokkos::ALL);
  const auto r = Kokkos::subview(rhs, slot, Kokkos::ALL);
  const Scalar scale = copy_system(a, b, s, m, r);
  const int result = lu_solve_one_thread(m, r, n, tiny_factor * scale);
  info(s) = result;
  for (int i = 0; i < n; ++i) x(s, i) = result == 0 ? r(i) : Scalar(0);
}

// The slices of work batched_thread needs for `systems` systems on Space: none on a device (its
// mappings keep a system in registers or in scratch, device_lu.hpp); on a host space two per
// thread, of which a thread uses the first for a run of systems (the factors of one system stay
// in its cache instead of going out to a work View as large as A) and leaves the second empty:
// threads on neighbouring slices ran 1.4x slower on a 2-core Xeon than with a slice between them
// (or with several runs per thread), probably because caches fetch lines in pairs, so that the
// end of one slice and the start of the next went back and forth between the cores. A batch
// smaller than that gets one slice per system.
template <class Space>
std::size_t thread_work_slices(const Space& space, const std::size_t systems) {
  if constexpr (!is_host_space<Space>()) {
    (void)space;
    (void)systems;
    return 0;
  } else {
    const auto slices = 2 * static_cast<std::size_t>(space.concurrency());
    return systems < slices ? systems : slices;
  }
}

// batched-thread on slices of the work Views lu and rhs (thread_work_slices): slice s for system
// s where there is one per system, else slice 2t for the t-th run of consecutive systems.
template <class Space, class A, class B, class X, class Info, class LU, class Rhs, MINIAPP_KERNEL_UNIT>
void batched_thread_on_slices(const Space& space, const A& a, const B& b, const X& x, const Info& info, const LU& lu,
                              const Rhs& rhs) {
  using Scalar = typename A::value_type;
  const int n = static_cast<int>(a.extent(1));
  const Scalar tiny_factor = tiny_pivot_factor<Scalar>(a.extent(1));
  constexpr bool kHost = is_host_space<Space>();
  const std::size_t systems = a.extent(0), runs = lu.extent(0) / 2;
  if (lu.extent(0) >= systems) {
    Kokkos::parallel_for(
        "solver::batched-thread", Kokkos::RangePolicy<Space>(space, 0, systems), KOKKOS_LAMBDA(const std::size_t s) {
          solve_thread_system<kHost>(a, b, x, info, lu, rhs, s, s, n, tiny_factor);
        });
    return;
  }
  Kokkos::parallel_for(
      "solver::batched-thread", Kokkos::RangePolicy<Space>(space, 0, runs), KOKKOS_LAMBDA(const std::size_t t) {
        for (std::size_t s = systems * t / runs; s < systems * (t + 1) / runs; ++s)
          solve_thread_system<kHost>(a, b, x, info, lu, rhs, s, 2 * t, n, tiny_factor);
      });
}

// One system per thread: on a device in registers up to order kRegisterOrderMax, up to
// kColumnOrderMax a thread per column (each column in its registers), above it on the vector
// lanes of one Kokkos thread (device_lu.hpp; at kLanesBlockOrder in a fixed block); on a host
// space on its work slices.
template <class Space, class A, class B, class X, class Info, class LU, class Rhs, MINIAPP_KERNEL_UNIT>
void batched_thread(const Space& space, const A& a, const B& b, const X& x, const Info& info, const LU& lu,
                    const Rhs& rhs) {
  const int n = static_cast<int>(a.extent(1));
  if constexpr (!is_host_space<Space>()) {
    if (n <= kRegisterOrderMax) {
      batched_thread_registers(space, a, b, x, info, n);
    } else if (n <= kColumnOrderMax) {
      batched_thread_columns(space, a, b, x, info);
    } else if (n == kLanesBlockOrder) {
      batched_thread_lanes<kLanesBlockOrder>(space, a, b, x, info);
    } else {
      batched_thread_lanes(space, a, b, x, info);
    }
  } else {
    batched_thread_on_slices(space, a, b, x, info, lu, rhs);
  }
}

// Threads x vector lanes of a batched-team team on device spaces where the batch, a warp per
// system, fills the space's resident threads (space.concurrency()); Kokkos::AUTO where it does
// not. Each team is one system whose steps rendezvous at every column: more threads make a team
// little faster, only fewer teams resident, unless the systems are too few to fill the device
// (seed 001's 2000 of order 100, where AUTO was fastest). The sizes timed: docs/tuning-notes.md,
// "solver: batched-team's team size on devices".
inline constexpr int kBatchedTeamLanes = 32;

// One system per team, [A | b] in team scratch (team_scratch_refusal says when it cannot fit).
// TeamThreads: the team's threads (rows); 0 the workload's choice (device spaces
// kBatchedTeamLanes / lanes where the systems fill the device so, else Kokkos::AUTO; host spaces
// Kokkos::AUTO), -1 Kokkos::AUTO. The benchmarks solver-batched-team-t<T> and -auto time fixed
// sizes and AUTO beside the choice on devices.
template <int TeamThreads = 0, class Space, class A, class B, class X, class Info, MINIAPP_KERNEL_UNIT>
void batched_team(const Space& space, const A& a, const B& b, const X& x, const Info& info) {
  using Scalar = typename A::value_type;
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Scratch = ScratchMatrix<Scalar, Space>;
  const int n = static_cast<int>(a.extent(1));
  const Scalar tiny_factor = tiny_pivot_factor<Scalar>(a.extent(1));
  const std::size_t bytes = team_scratch_bytes<Scalar, Space>(a.extent(1));
  const int level = bytes <= team_scratch_limit<Space>(0) ? 0 : 1;
  const int columns = static_cast<int>(system_columns<Scalar, Space>(a.extent(1)));
  constexpr bool kHost = is_host_space<Space>();
  // Rows go across the team's threads, columns across vector lanes (GPUs only).
  const int lanes = kHost ? 1 : n <= 8 ? 8 : n <= 16 ? 16 : 32;
  const bool warps_fill = static_cast<std::int64_t>(a.extent(0)) * kBatchedTeamLanes >= space.concurrency();
  const int threads = TeamThreads > 0                                ? TeamThreads
                      : TeamThreads == 0 && !kHost && warps_fill ? kBatchedTeamLanes / lanes
                                                                     : 0;
  Policy policy = threads > 0 ? Policy(space, static_cast<int>(a.extent(0)), threads, lanes)
                              : Policy(space, static_cast<int>(a.extent(0)), Kokkos::AUTO, lanes);
  policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for(
      "solver::batched-team", policy, KOKKOS_LAMBDA(const Member& team) {
        const int s = team.league_rank();
        const Scratch m(team.team_scratch(level), n, columns);
        solve_team_system<kHost>(team, a, b, x, info, s, m, n, tiny_factor);
      });
}

// One system per thread through Kokkos Kernels' batched LU with partial pivoting
// (compat::batched_lu_factor / batched_lu_solve: KokkosBatched::SerialGetrf and SerialGetrs, or
// on Kokkos Kernels 4.5 the same elimination from its batched pieces). A is copied to this
// system's slice of `lu` and b to x first, so the caller's A and b stay as they were. The factors
// are then searched for the first pivot not above n eps max|A|, which names the column as in the
// other variants (the elimination itself never stops early: the pivots it picks are the same).
template <class Space, class A, class B, class X, class Info, class LU, class Pivots, MINIAPP_KERNEL_UNIT>
void batched_kokkos_kernels(const Space& space, const A& a, const B& b, const X& x, const Info& info, const LU& lu,
                            const Pivots& pivots) {
  using Scalar = typename A::value_type;
  const int n = static_cast<int>(a.extent(1));
  const Scalar tiny_factor = tiny_pivot_factor<Scalar>(a.extent(1));
  Kokkos::parallel_for(
      "solver::batched-kokkos-kernels", Kokkos::RangePolicy<Space>(space, 0, a.extent(0)),
      KOKKOS_LAMBDA(const std::size_t s) {
        const auto m = Kokkos::subview(lu, s, Kokkos::ALL, Kokkos::ALL);
        const auto p = Kokkos::subview(pivots, s, Kokkos::ALL);
        const auto xs = Kokkos::subview(x, s, Kokkos::ALL);
        const Scalar scale = copy_system(a, b, s, m, xs);
        compat::batched_lu_factor(m, p);
        const Scalar tiny = tiny_factor * scale;
        int result = 0;
        for (int k = 0; k < n && result == 0; ++k)
          if (is_tiny_pivot(m(k, k), tiny)) result = k + 1;
        if (result == 0) {
          compat::batched_lu_solve(m, p, xs);
        } else {
          for (int i = 0; i < n; ++i) xs(i) = Scalar(0);
        }
        info(s) = result;
      });
}

}  // namespace miniapp::solver
