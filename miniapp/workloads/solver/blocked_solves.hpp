#pragma once
// dense-blocked's triangular solves: the block row of U during the factorisation (lower_solve,
// recursively halved into gemms and leaves) and the final L y = P b, U x = y, each in a host form
// and a device form (Form, blocked_work.hpp).

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/unroll.hpp"
#include "miniapp/workloads/solver/blocked_work.hpp"

#include <algorithm>

namespace miniapp::solver::blocked {

// A leaf of lower_solve (rows [r0, r1), at most kLeaf), host form: a chunk of columns per thread,
// row by row, each row's update vectorised over the chunk.
template <class Scalar, class Space, MINIAPP_KERNEL_UNIT>
void lower_solve_chunks(const Space& space, const Work<Scalar, Space>& w, int r0, int r1, int c0, int c1) {
  const auto info = w.info;
  const auto lu = w.lu;
  const int s = w.system;
  constexpr int chunk_width = kColumnChunk<Space>;
  const int chunks = (c1 - c0 + chunk_width - 1) / chunk_width;
  Kokkos::parallel_for(
      "solver::dense-trsm", Kokkos::RangePolicy<Space>(space, 0, chunks), KOKKOS_LAMBDA(const int chunk) {
        if (info(s) != 0) return;
        const int lo = c0 + chunk * chunk_width;
        const int hi = lo + chunk_width < c1 ? lo + chunk_width : c1;
        for (int r = r0 + 1; r < r1; ++r)
          for (int q = r0; q < r; ++q) {
            const Scalar l = lu(r, q);
            for (int c = lo; c < hi; ++c) lu(r, c) -= l * lu(q, c);
          }
      });
}

// The same leaf, device form: a column per thread, its leaf rows loaded into registers at once,
// the triangle solved there (the same operations in the same order) and stored back once. The
// host form's thread read and wrote global memory at every step, one dependent access after
// another (on the H200 a sixth of the 4096 solve: docs/tuning-notes.md).
template <class Scalar, class Space, MINIAPP_KERNEL_UNIT>
void lower_solve_registers(const Space& space, const Work<Scalar, Space>& w, int r0, int r1, int c0, int c1) {
  const auto info = w.info;
  const auto lu = w.lu;
  const int s = w.system;
  const int rows = r1 - r0;
  Kokkos::parallel_for(
      "solver::dense-trsm-registers", Kokkos::RangePolicy<Space>(space, c0, c1), KOKKOS_LAMBDA(const int c) {
        if (info(s) != 0) return;
        Scalar v[kLeaf];
        MINIAPP_UNROLL
        for (int r = 0; r < kLeaf; ++r) v[r] = r < rows ? lu(r0 + r, c) : Scalar(0);
        MINIAPP_UNROLL
        for (int r = 1; r < kLeaf; ++r) {
          MINIAPP_UNROLL
          for (int q = 0; q < r; ++q)
            if (r < rows) v[r] -= lu(r0 + r, r0 + q) * v[q];
        }
        MINIAPP_UNROLL
        for (int r = 0; r < kLeaf; ++r)
          if (r < rows) lu(r0 + r, c) = v[r];
      });
}

// A(r0:r1, c0:c1) = L(r0:r1, r0:r1)^-1 A(r0:r1, c0:c1), L unit lower triangular: recursively
// halved so that most flops are a gemm; the leaves in the form F names.
template <Form F, class Scalar, class Space>
void lower_solve(const Space& space, const Work<Scalar, Space>& w, int r0, int r1, int c0, int c1) {
  if (c1 <= c0) return;
  const int rows = r1 - r0;
  if (rows > kLeaf) {
    const int rm = r0 + recursion_split(rows);
    lower_solve<F>(space, w, r0, rm, c0, c1);
    update(space, w, rm, r1, r0, rm, c0, c1);
    lower_solve<F>(space, w, rm, r1, c0, c1);
    return;
  }
  if constexpr (kDeviceForm<F, Space>) {
    lower_solve_registers(space, w, r0, r1, c0, c1);
  } else {
    lower_solve_chunks(space, w, r0, r1, c0, c1);
  }
}

// L y = P b, then U x = y, a diagonal block of rows at a time, host form (solves_by_blocks is the
// device form), left-looking: before each block the team's threads reduce the block's own rows by
// all columns left of it (right of it, going up), each row read once, contiguously; then one
// member solves the block's triangle. The right-looking form read strips of 64 values of every
// row below the block, each row a page or more from the next, and took several times LAPACK's
// getrs on the same factors; left-looking is faster than getrs (docs/tuning-notes.md,
// "solver: dense-blocked's triangular solves").
template <class Scalar, class Space, class X, MINIAPP_KERNEL_UNIT>
void solves(const Space& space, const Work<Scalar, Space>& w, const X& x) {
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  const auto info = w.info;
  const auto lu = w.lu;
  const auto rhs = w.rhs;
  const int n = w.n();
  const int s = w.system;
  constexpr int block = kSolveBlock;
  auto solve = KOKKOS_LAMBDA(const Member& team) {
    if (info(s) != 0) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int i) { x(s, i) = Scalar(0); });
      return;
    }
    for (int b0 = 0; b0 < n; b0 += block) {
      const int b1 = b0 + block < n ? b0 + block : n;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b0, b1),
                           [&](const int i) { rhs(i) -= row_times_vector(lu, i, 0, b0, rhs); });
      team.team_barrier();
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (int i = b0 + 1; i < b1; ++i) rhs(i) -= row_times_vector(lu, i, b0, i, rhs);
      });
      team.team_barrier();
    }
    for (int b1 = n; b1 > 0; b1 -= block) {
      const int b0 = b1 - block > 0 ? b1 - block : 0;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b0, b1),
                           [&](const int i) { rhs(i) -= row_times_vector(lu, i, b1, n, rhs); });
      team.team_barrier();
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (int i = b1 - 1; i >= b0; --i) rhs(i) = (rhs(i) - row_times_vector(lu, i, i + 1, b1, rhs)) / lu(i, i);
      });
      team.team_barrier();
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int i) { x(s, i) = rhs(i); });
  };
  Kokkos::parallel_for("solver::dense-solves", Policy(space, 1, whole_space_team(space, solve)), solve);
}

// Diagonal block [b0, b1) of the solves, device form: the block's triangle and its part of rhs
// staged in one team's scratch, solved there a column at a time by a thread per row (once y_i is
// final, every row below it, above it for U, takes its column's term off, then a rendezvous),
// written back. Lower: L unit lower triangular; else U, whose y_i = t(i, m) / t(i, i) each thread
// forms as it needs it and the write-back stores. One thread doing the whole triangle (the host
// form's row by row) is a chain of dependent reads of on-chip memory, 128 of them a solve at
// n = 4096.
template <class Scalar, class Space, MINIAPP_KERNEL_UNIT>
void solve_diagonal_block(const Space& space, const Work<Scalar, Space>& w, int b0, int b1, bool lower) {
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Block = ScratchMatrix<Scalar, Space>;
  const auto info = w.info;
  const auto lu = w.lu;
  const auto rhs = w.rhs;
  const int s = w.system;
  const int m = b1 - b0;
  const std::size_t bytes = Block::shmem_size(m, m + 1);  // rhs in the last column
  const int level = bytes <= team_scratch_limit<Space>(0) ? 0 : 1;
  Policy policy(space, 1, is_host_space<Space>() ? 1 : kSolveBlock);
  policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for(
      "solver::dense-solve-block", policy, KOKKOS_LAMBDA(const Member& team) {
        if (info(s) != 0) return;
        const Block t(team.team_scratch(level), m, m + 1);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m * (m + 1)), [&](const int e) {
          const int i = e / (m + 1), j = e - i * (m + 1);
          t(i, j) = j < m ? lu(b0 + i, b0 + j) : rhs(b0 + i);
        });
        team.team_barrier();
        if (lower) {
          for (int i = 0; i + 1 < m; ++i) {
            const Scalar yi = t(i, m);  // final: row i's last term came off in the step before
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, i + 1, m), [&](const int j) { t(j, m) -= t(j, i) * yi; });
            team.team_barrier();
          }
        } else {
          for (int i = m - 1; i > 0; --i) {
            const Scalar yi = t(i, m) / t(i, i);  // t(i, m) is not written in this step
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, i), [&](const int j) { t(j, m) -= t(j, i) * yi; });
            team.team_barrier();
          }
        }
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m),
                             [&](const int i) { rhs(b0 + i) = lower ? t(i, m) : t(i, m) / t(i, i); });
      });
}

// rhs(i) -= lu(i, b0:b1) rhs(b0:b1) for the rows i in [r0, r1), device form: over the whole
// device, a thread per row and vector lanes across the block's columns (each row's values one
// coalesced stretch).
template <class Scalar, class Space, MINIAPP_KERNEL_UNIT>
void update_rows(const Space& space, const Work<Scalar, Space>& w, int r0, int r1, int b0, int b1) {
  if (r1 <= r0) return;
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  constexpr int threads = is_host_space<Space>() ? 1 : 8, lanes = is_host_space<Space>() ? 1 : 32;
  const auto info = w.info;
  const auto lu = w.lu;
  const auto rhs = w.rhs;
  const int s = w.system;
  const int league = (r1 - r0 + threads - 1) / threads;
  Kokkos::parallel_for(
      "solver::dense-solve-rows", Policy(space, league, threads, lanes), KOKKOS_LAMBDA(const Member& team) {
        if (info(s) != 0) return;
        const int i = r0 + team.league_rank() * threads + team.team_rank();
        if (i >= r1) return;  // nothing team-wide follows: the reduction is this thread's lanes'
        Scalar sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, b0, b1), [&](const int j, Scalar& acc) { acc += lu(i, j) * rhs(j); }, sum);
        Kokkos::single(Kokkos::PerThread(team), [&]() { rhs(i) -= sum; });
      });
}

// L y = P b, then U x = y, device form: per diagonal block of kSolveBlock rows, its triangle on
// one multiprocessor (solve_diagonal_block), then every row below it (above it, going up) over
// the whole device (update_rows). The one-team form kept both solves on one multiprocessor: 34
// ms of the 4096 solve on the H200 (kernel times, Kokkos 4.6.01), where cuSOLVER's getrs took 2.2.
template <class Scalar, class Space, class X, MINIAPP_KERNEL_UNIT>
void solves_by_blocks(const Space& space, const Work<Scalar, Space>& w, const X& x) {
  const int n = w.n();
  constexpr int block = kSolveBlock;
  for (int b0 = 0; b0 < n; b0 += block) {
    const int b1 = std::min(b0 + block, n);
    solve_diagonal_block(space, w, b0, b1, true);
    update_rows(space, w, b1, n, b0, b1);
  }
  for (int b1 = n; b1 > 0; b1 -= block) {
    const int b0 = std::max(b1 - block, 0);
    solve_diagonal_block(space, w, b0, b1, false);
    update_rows(space, w, 0, b0, b0, b1);
  }
  const auto info = w.info;
  const auto rhs = w.rhs;
  const int s = w.system;
  Kokkos::parallel_for(
      "solver::dense-solution", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(const int i) { x(s, i) = info(s) != 0 ? Scalar(0) : rhs(i); });
}

}  // namespace miniapp::solver::blocked
