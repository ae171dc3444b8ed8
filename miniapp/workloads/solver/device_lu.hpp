#pragma once
// batched-thread's GPU mappings: one system per thread as a GPU runs threads. Up to order
// kRegisterOrderMax a system is one GPU thread's registers (the thread reads its system's n^2
// contiguous values; a warp's first load touches 32 systems' first sectors, its next ones hit
// them in L1); up to kColumnOrderMax (16) a warp's threads hold two systems' columns, one each,
// in their registers; above it one Kokkos thread is a vector of lanes (part of a warp, or a whole
// one) over the columns of [A | b] in that thread's own scratch, so each row is one coalesced
// load. The earlier one CUDA thread per system on a slice of a global work View took 13x and
// 200x the time moving the bytes takes (order 8 and 32 on the H200): the elimination went through
// global memory, one dependent load after another. Plain Kokkos: the host spaces run the same code (the unit tests check it there), with
// one lane, and the column mapping with one or two threads.

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/unroll.hpp"
#include "miniapp/workloads/solver/column_lu.hpp"
#include "miniapp/workloads/solver/params.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace miniapp::solver {

// The pivot of column k of m over `rows` (a TeamThreadRange or a ThreadVectorRange from k to n):
// the largest |m(i, k)| and its row, the same on every thread or lane of the range afterwards.
template <class Rows, class Matrix>
KOKKOS_INLINE_FUNCTION auto column_pivot(const Rows& rows, const Matrix& m, const int k) {
  using Scalar = typename Matrix::non_const_value_type;
  using MaxLoc = Kokkos::MaxLoc<Scalar, int>;
  typename MaxLoc::value_type pivot;
  Kokkos::parallel_reduce(
      rows,
      [&](const int i, typename MaxLoc::value_type& best) {
        const Scalar v = compat::math::fabs(m(i, k));
        if (v > best.val) {
          best.val = v;
          best.loc = i;
        }
      },
      MaxLoc(pivot));
  return pivot;
}

// kRegisterOrderMax, the largest order kept in registers: params.hpp (the refusal reads it).

// A system of order N in one thread's registers, its values got through get_a(i, j) and
// get_b(i): max|A|, LU with partial pivoting (the same steps and test as lu_solve_one_thread;
// rows swapped by selects, since registers cannot be indexed by the pivot's row), then back
// substitution; x out through put_x(i, value), zeros where a pivot is tiny. Returns the info
// (0, or the column of the tiny pivot). Every value is read before any is put.
template <int N, class Scalar, class GetA, class GetB, class PutX>
KOKKOS_INLINE_FUNCTION int solve_registers(const GetA& get_a, const GetB& get_b, const PutX& put_x,
                                           const Scalar tiny_factor) {
  Scalar m[N][N + 1];
  Scalar scale = 0;
  MINIAPP_UNROLL
  for (int i = 0; i < N; ++i) {
    MINIAPP_UNROLL
    for (int j = 0; j < N; ++j) {
      m[i][j] = get_a(i, j);
      const Scalar v = compat::math::fabs(m[i][j]);
      scale = v > scale ? v : scale;
    }
    m[i][N] = get_b(i);
  }
  const Scalar tiny = tiny_factor * scale;
  int result = 0;
  MINIAPP_UNROLL
  for (int k = 0; k < N; ++k) {
    Scalar best = compat::math::fabs(m[k][k]);
    int p = k;
    MINIAPP_UNROLL
    for (int i = k + 1; i < N; ++i) {
      const Scalar v = compat::math::fabs(m[i][k]);
      if (v > best) best = v, p = i;
    }
    if (!(best > tiny)) {
      result = k + 1;
      break;
    }
    MINIAPP_UNROLL
    for (int i = k + 1; i < N; ++i) {
      const bool swap = i == p;
      MINIAPP_UNROLL
      for (int j = k; j <= N; ++j) {
        const Scalar t = m[k][j];
        m[k][j] = swap ? m[i][j] : t;
        m[i][j] = swap ? t : m[i][j];
      }
    }
    const Scalar inverse_pivot = Scalar(1) / m[k][k];
    MINIAPP_UNROLL
    for (int i = k + 1; i < N; ++i) {
      const Scalar l = m[i][k] * inverse_pivot;
      MINIAPP_UNROLL
      for (int j = k + 1; j <= N; ++j) m[i][j] -= l * m[k][j];
    }
  }
  if (result == 0) {
    MINIAPP_UNROLL
    for (int k = N - 1; k >= 0; --k) {
      Scalar t = m[k][N];
      MINIAPP_UNROLL
      for (int j = k + 1; j < N; ++j) t -= m[k][j] * m[j][N];
      m[k][N] = t / m[k][k];
    }
  }
  MINIAPP_UNROLL
  for (int i = 0; i < N; ++i) put_x(i, result == 0 ? m[i][N] : Scalar(0));
  return result;
}

// System s of the batch in one thread's registers, read from and written to the batch's Views.
template <int N, class A, class B, class X, class Info, class Scalar>
KOKKOS_INLINE_FUNCTION void solve_in_registers(const A& a, const B& b, const X& x, const Info& info,
                                               const std::size_t s, const Scalar tiny_factor) {
  info(s) = solve_registers<N>([&](const int i, const int j) { return a(s, i, j); },
                               [&](const int i) { return b(s, i); },
                               [&](const int i, const Scalar v) { x(s, i) = v; }, tiny_factor);
}

// Every system of the batch in registers, order N (the caller's n).
template <int N, class Space, class A, class B, class X, class Info, MINIAPP_KERNEL_UNIT>
void batched_thread_registers(const Space& space, const A& a, const B& b, const X& x, const Info& info) {
  using Scalar = typename A::value_type;
  const Scalar tiny_factor = tiny_pivot_factor<Scalar>(N);
  Kokkos::parallel_for(
      "solver::batched-thread-registers", Kokkos::RangePolicy<Space>(space, 0, a.extent(0)),
      KOKKOS_LAMBDA(const std::size_t s) { solve_in_registers<N>(a, b, x, info, s, tiny_factor); });
}

// f(std::integral_constant<int, n>) for an order n of 1 to kRegisterOrderMax: an order to its instantiation.
template <class F>
void with_register_order(const int n, const F& f) {
  static_assert(kRegisterOrderMax == 10, "one case per order up to kRegisterOrderMax");
  switch (n) {
    case 1: return f(std::integral_constant<int, 1>());
    case 2: return f(std::integral_constant<int, 2>());
    case 3: return f(std::integral_constant<int, 3>());
    case 4: return f(std::integral_constant<int, 4>());
    case 5: return f(std::integral_constant<int, 5>());
    case 6: return f(std::integral_constant<int, 6>());
    case 7: return f(std::integral_constant<int, 7>());
    case 8: return f(std::integral_constant<int, 8>());
    case 9: return f(std::integral_constant<int, 9>());
    case 10: return f(std::integral_constant<int, 10>());
    default: Kokkos::abort("solver: batched-thread: order outside 1..kRegisterOrderMax in registers");
  }
}

template <class Space, class A, class B, class X, class Info, MINIAPP_KERNEL_UNIT>
void batched_thread_registers(const Space& space, const A& a, const B& b, const X& x, const Info& info, const int n) {
  with_register_order(n, [&](auto order) { batched_thread_registers<decltype(order)::value>(space, a, b, x, info); });
}

// batched-thread's column mapping (orders kRegisterOrderMax + 1 to kColumnOrderMax): column_lu.hpp.

// System s by the vector lanes of one Kokkos thread, [A | b] (n x (n + 1)) in the thread's scratch
// m: lanes run over columns in the copy, the row swap, the elimination (each lane takes its
// columns down every row below the pivot, so a step is one pass) and over rows in the pivot
// search (a MaxLoc vector reduction) and the column-oriented back substitution. Every vector loop
// ends with its lanes in step (Kokkos synchronises them), and no loop writes what another lane
// reads in the same loop.
template <class Member, class A, class B, class X, class Info, class Matrix, class Scalar>
KOKKOS_INLINE_FUNCTION void solve_on_lanes(const Member& thread, const A& a, const B& b, const X& x, const Info& info,
                                           const std::size_t s, const Matrix& m, const int n,
                                           const Scalar tiny_factor) {
  Scalar scale = 0;
  Kokkos::parallel_reduce(
      Kokkos::ThreadVectorRange(thread, n),
      [&](const int j, Scalar& lane_max) {
        // Four rows' loads before their stores: a store to scratch between two loads of A keeps
        // the compiler from having more than one load of A in flight (it cannot tell them apart).
        int i = 0;
        for (; i + 4 <= n; i += 4) {
          const Scalar v0 = a(s, i, j), v1 = a(s, i + 1, j), v2 = a(s, i + 2, j), v3 = a(s, i + 3, j);
          m(i, j) = v0, m(i + 1, j) = v1, m(i + 2, j) = v2, m(i + 3, j) = v3;
          lane_max = larger_of(larger_of(lane_max, compat::math::fabs(v0)), compat::math::fabs(v1));
          lane_max = larger_of(larger_of(lane_max, compat::math::fabs(v2)), compat::math::fabs(v3));
        }
        for (; i < n; ++i) {
          const Scalar v = a(s, i, j);
          m(i, j) = v;
          lane_max = larger_of(lane_max, compat::math::fabs(v));
        }
      },
      Kokkos::Max<Scalar>(scale));
  Kokkos::parallel_for(Kokkos::ThreadVectorRange(thread, n), [&](const int i) { m(i, n) = b(s, i); });
  const Scalar tiny = tiny_factor * scale;
  int result = 0;
  for (int k = 0; k < n; ++k) {
    const auto pivot = column_pivot(Kokkos::ThreadVectorRange(thread, k, n), m, k);
    if (!(pivot.val > tiny)) {  // the same value on every lane: all leave together
      result = k + 1;
      break;
    }
    const int p = pivot.loc;
    if (p != k)
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(thread, k, n + 1), [&](const int j) {
        const Scalar t = m(k, j);
        m(k, j) = m(p, j);
        m(p, j) = t;
      });
    const Scalar inverse_pivot = Scalar(1) / m(k, k);
    // Column k is read, never written, in this step: every lane sees the same multipliers. Four
    // rows a pass, all eight loads before the four stores (as in the copy above), one fma each.
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(thread, k + 1, n + 1), [&](const int j) {
      const Scalar u = m(k, j) * inverse_pivot;
      int i = k + 1;
      for (; i + 4 <= n; i += 4) {
        const Scalar l0 = m(i, k), l1 = m(i + 1, k), l2 = m(i + 2, k), l3 = m(i + 3, k);
        const Scalar v0 = m(i, j), v1 = m(i + 1, j), v2 = m(i + 2, j), v3 = m(i + 3, j);
        m(i, j) = v0 - l0 * u, m(i + 1, j) = v1 - l1 * u, m(i + 2, j) = v2 - l2 * u, m(i + 3, j) = v3 - l3 * u;
      }
      for (; i < n; ++i) m(i, j) -= m(i, k) * u;
    });
  }
  if (result == 0) {
    // x_k is final once the rows below have been applied; it goes straight out, so column n is
    // only ever read above row k in the step that writes it.
    for (int k = n - 1; k >= 0; --k) {
      const Scalar xk = m(k, n) / m(k, k);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(thread, k + 1), [&](const int i) {
        if (i < k) {
          m(i, n) -= m(i, k) * xk;
        } else {
          x(s, k) = xk;
        }
      });
    }
  } else {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(thread, n), [&](const int i) { x(s, i) = Scalar(0); });
  }
  Kokkos::single(Kokkos::PerThread(thread), [&]() { info(s) = result; });
}

// LanesShape, how the lanes mapping runs on a space: params.hpp (the refusal reads it).

// One system's [A | b] in a thread's scratch for the lanes mapping: rows n + 1 values apart
// (Rows 0, the workload's), or in a Rows x (Rows + 1) block for any n <= Rows, whose row stride
// the compiler knows. At Rows 32 (nvcc 13.0, sm_90, Kokkos 4.6.01, float64) the elimination's
// four-row pass is 32 PTX instructions instead of 42 (4 64-bit adds a pass instead of 13) and
// the kernel takes 54 registers instead of 72; below order Rows the block holds more scratch
// than the system needs. Prepared for a GPU: benchmarks/bench_solver.cpp's lanes-rows32.
template <class Scalar, class Space, int Rows>
using LanesMatrix =
    std::conditional_t<Rows == 0, ScratchMatrix<Scalar, Space>,
                       Kokkos::View<Scalar[Rows == 0 ? 1 : Rows][Rows + 1], Kokkos::LayoutRight,
                                    typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>>;

template <class Scratch, int Rows, class Member>
KOKKOS_INLINE_FUNCTION Scratch lanes_matrix(const Member& thread, const int level, const int n) {
  if constexpr (Rows == 0) {
    return Scratch(thread.thread_scratch(level), n, n + 1);
  } else {
    return Scratch(thread.thread_scratch(level));
  }
}

// The lanes mapping's launch: `systems` systems of order n, system s read as a(s, i, j) and b(s, i)
// and written as x(s, k) = v and info(s) = r, whatever holds them (the workload's Views below;
// the bound probe in benchmarks/bench_solver.cpp makes the systems from a hash and keeps x).
template <class Scalar, int Rows, class Space, class A, class B, class X, class Info, MINIAPP_KERNEL_UNIT>
void launch_on_lanes(const Space& space, const char* label, const int n, const std::size_t systems, const A& a,
                     const B& b, const X& x, const Info& info) {
  static_assert(Rows >= 0, "Rows 0 holds any order; else the largest order the block holds");
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Scratch = LanesMatrix<Scalar, Space, Rows>;
  if (Rows > 0 && n > Rows)
    throw std::invalid_argument("solver: the lanes mapping's " + std::to_string(Rows) + "-row block cannot hold order " +
                                std::to_string(n));
  const std::size_t held = Rows > 0 ? std::size_t(Rows) : std::size_t(n);
  const Scalar tiny_factor = tiny_pivot_factor<Scalar>(static_cast<std::size_t>(n));
  const LanesShape shape = lanes_shape<Scalar, Space>(held);
  const int per_team = shape.systems_per_team, level = shape.level;
  const int teams = static_cast<int>((systems + per_team - 1) / per_team);
  Policy policy(space, teams, per_team, shape.lanes);
  policy.set_scratch_size(level, Kokkos::PerThread(shape.bytes_per_system));
  Kokkos::parallel_for(
      label, policy, KOKKOS_LAMBDA(const Member& thread) {
        const std::size_t s = std::size_t(thread.league_rank()) * per_team + thread.team_rank();
        if (s >= systems) return;  // the last team's spare threads: no team-wide step follows
        const Scratch m = lanes_matrix<Scratch, Rows>(thread, level, n);
        solve_on_lanes(thread, a, b, x, info, s, m, n, tiny_factor);
      });
}

// Every system of the batch on the lanes of one Kokkos thread each (solve_on_lanes), held as
// LanesMatrix<Rows> holds it (the workload's: Rows 0).
template <int Rows = 0, class Space, class A, class B, class X, class Info, MINIAPP_KERNEL_UNIT>
void batched_thread_lanes(const Space& space, const A& a, const B& b, const X& x, const Info& info) {
  launch_on_lanes<typename A::value_type, Rows>(space, "solver::batched-thread-lanes", static_cast<int>(a.extent(1)),
                                                a.extent(0), a, b, x, info);
}

}  // namespace miniapp::solver
