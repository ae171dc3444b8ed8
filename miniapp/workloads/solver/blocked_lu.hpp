#pragma once
// dense-blocked: the right-looking blocked LU of one large system with partial pivoting
// (LAPACK's getrf order), then the two triangular solves. Each panel is factored recursively as
// dgetrf2 does, and the block row of U is a triangular solve halved the same way, so most flops
// of panel and solve go through KokkosBlas::gemm. The recursion runs on the host and only
// launches kernels; free functions templated on the space, as every kernel here.

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/interruption.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/kokkos_kernels_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/unroll.hpp"
#include "miniapp/workloads/solver/kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace miniapp::solver::blocked {

// Columns a leaf of the recursive panel factorisation handles one at a time: the leaf's rows of
// n x kLeaf values stay in cache while each column is eliminated.
inline constexpr int kLeaf = 16;
// Rows per diagonal block of the two final triangular solves.
inline constexpr int kSolveBlock = 64;
// Columns one thread of the swap and triangular-solve kernels handles: a run of contiguous values
// to vectorise over on a CPU; one column per thread (neighbours coalesce) on a GPU.
template <class Space>
inline constexpr int kColumnChunk = is_host_space<Space>() ? 64 : 1;

// Which forms of the triangular solves run: the space's own (OfSpace: the host forms on host
// spaces, the device forms on devices), or the ones named, so that the tests run the device forms
// on host spaces as well.
enum class Form { OfSpace, Host, Device };
template <Form F, class Space>
inline constexpr bool kDeviceForm = F == Form::Device || (F == Form::OfSpace && !is_host_space<Space>());

// Where the recursive factorisation and triangular solve halve an extent: a multiple of the leaf,
// at least one leaf.
inline int recursion_split(int extent) { return std::max(kLeaf, extent / 2 / kLeaf * kLeaf); }

// The work space of one system's factorisation, reused system after system; `info` is the
// solver's per-system output.
template <class Scalar, class Space>
struct Work {
  using Device = Kokkos::Device<Space, typename Space::memory_space>;
  // A leaf's rows contiguous on a CPU; on a GPU, a column's values contiguous across threads.
  using LeafLayout = std::conditional_t<is_host_space<Space>(), Kokkos::LayoutRight, Kokkos::LayoutLeft>;
  using Info = Kokkos::View<int*, Kokkos::LayoutRight, typename Space::memory_space>;

  explicit Work(std::size_t n)
      : lu("solver::lu", n, n),
        rhs("solver::rhs", n),
        pivots("solver::pivots", n),
        leaf("solver::leaf", n, kLeaf),
        scale("solver::scale") {}

  Kokkos::View<Scalar**, Kokkos::LayoutRight, Device> lu;
  Kokkos::View<Scalar*, Device> rhs;
  Kokkos::View<int*, Device> pivots;
  Kokkos::View<Scalar**, LeafLayout, Device> leaf;  // the leaf of the panel being factored
  Kokkos::View<Scalar, typename Space::memory_space> scale;
  Info info;
  int system = 0;
  int n() const { return static_cast<int>(lu.extent(0)); }
};

// One team spanning the host's threads, or a large block on a GPU, for the sequential steps.
template <class Space, class Functor>
int whole_space_team(const Space& space, const Functor& f) {
  const int largest = Kokkos::TeamPolicy<Space>(space, 1, 1).team_size_max(f, Kokkos::ParallelForTag());
  return std::max(1, std::min(largest, is_host_space<Space>() ? static_cast<int>(space.concurrency()) : 256));
}

// sum_j m(i, j) v(j) over j in [j0, j1), in four independent sums: one running sum would be a
// chain of dependent adds the compiler may not reorder.
template <class MatrixView, class VectorView>
KOKKOS_INLINE_FUNCTION typename VectorView::non_const_value_type row_times_vector(const MatrixView& m, int i, int j0,
                                                                                 int j1, const VectorView& v) {
  typename VectorView::non_const_value_type s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int j = j0;
  for (; j + 3 < j1; j += 4) {
    s0 += m(i, j) * v(j);
    s1 += m(i, j + 1) * v(j + 1);
    s2 += m(i, j + 2) * v(j + 2);
    s3 += m(i, j + 3) * v(j + 3);
  }
  for (; j < j1; ++j) s0 += m(i, j) * v(j);
  return (s0 + s1) + (s2 + s3);
}

// Columns [c0, c1), rows [c0, n), one column after the other by one team, on a compact copy
// (w.leaf): in place, every row of the leaf is on a page of its own (the rows of lu are n values
// apart), and each column's pass would miss the TLB once per row. The pass that eliminates
// column j also finds the pivot of column j + 1 (a team MaxLoc reduction), so each column costs
// one pass over the rows and one rendezvous (two when rows are swapped).
template <class Scalar, class Space, MINIAPP_KERNEL_UNIT>
void factor_leaf(const Space& space, const Work<Scalar, Space>& w, int c0, int c1) {
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using MaxLoc = Kokkos::MaxLoc<Scalar, int>;
  using Best = typename MaxLoc::value_type;
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
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, j + 1, rows),
          [&](const int r, Best& best) {
            const Scalar l = leaf(r, j) * inverse_pivot;
            leaf(r, j) = l;
            for (int c = j + 1; c < width; ++c) leaf(r, c) -= l * leaf(j, c);
            const Scalar v = compat::math::fabs(leaf(r, next));
            if (v > best.val) best.val = v, best.loc = r;
          },
          MaxLoc(pivot));
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, rows), [&](const int r) {
      for (int c = 0; c < width; ++c) lu(c0 + r, c0 + c) = leaf(r, c);
    });
  };
  Kokkos::parallel_for("solver::dense-panel", Policy(space, 1, whole_space_team(space, factor)), factor);
}

// The row swaps of pivots [j0, j1), in order, applied to columns [c_lo, c_hi) (and to b with
// `with_rhs`), a chunk of columns per thread (LAPACK's dlaswp).
template <class Scalar, class Space, MINIAPP_KERNEL_UNIT>
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
        for (int j = j0; j < j1; ++j) {
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

// A(r0:r1, c0:c1) -= A(r0:r1, k0:k1) A(k0:k1, c0:c1), on the default instance of the space
// (compat::gemm_nn: KokkosBlas::gemm, or gemv for one column).
template <class Scalar, class Space>
void update(const Space&, const Work<Scalar, Space>& w, int r0, int r1, int k0, int k1, int c0, int c1) {
  using Range = Kokkos::pair<int, int>;
  if (r1 <= r0 || c1 <= c0 || k1 <= k0) return;
  compat::gemm_nn(Scalar(-1), Kokkos::subview(w.lu, Range(r0, r1), Range(k0, k1)),
                  Kokkos::subview(w.lu, Range(k0, k1), Range(c0, c1)), Scalar(1),
                  Kokkos::subview(w.lu, Range(r0, r1), Range(c0, c1)));
}

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
// another: 15 ms of the 4096 solve on the H200 (kernel times, Kokkos 4.6.01), 30 us a launch.
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

// LU with partial pivoting of columns [c0, c1), rows [c0, n), whose left columns are final
// (LAPACK's dgetrf2): the left half is factored, its swaps applied to the right half, the right
// half updated by a triangular solve and a gemm, then factored in turn; its swaps are applied to
// the left half.
template <Form F, class Scalar, class Space>
void factor_columns(const Space& space, const Work<Scalar, Space>& w, int c0, int c1) {
  const int width = c1 - c0;
  if (width <= kLeaf) return factor_leaf(space, w, c0, c1);
  const int cm = c0 + recursion_split(width);
  factor_columns<F>(space, w, c0, cm);
  swap_rows(space, w, c0, cm, cm, c1, false);
  lower_solve<F>(space, w, c0, cm, cm, c1);
  update(space, w, cm, w.n(), c0, cm, cm, c1);
  factor_columns<F>(space, w, cm, c1);
  swap_rows(space, w, cm, c1, c0, cm, false);
}

// L y = P b, then U x = y, a diagonal block of rows at a time, host form (solves_by_blocks is the
// device form): one member solves the block's triangle; the rest of the block's rows is row-wise
// dot products of contiguous values.
// - Right-looking (devices before solves_by_blocks): after each block the team updates every row below it (above it, going
//   up) with the block's columns: thousands of rows in parallel.
// - Host spaces, left-looking: before each block the team's threads reduce the block's own rows by
//   all columns left of it (right of it, going up), each row read once, contiguously. The
//   right-looking form read strips of 64 values of every row below the block, each row a page or
//   more from the next: 2.1-3.7 ms per solve at n = 1024 against 0.59-0.67 ms for LAPACK's getrs
//   on the same factors (Xeon, 2 OpenMP threads); left-looking 0.49 ms.
template <class Scalar, class Space, class X, MINIAPP_KERNEL_UNIT>
void solves(const Space& space, const Work<Scalar, Space>& w, const X& x) {
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  const auto info = w.info;
  const auto lu = w.lu;
  const auto rhs = w.rhs;
  const int n = w.n();
  const int s = w.system;
  const bool left_looking = is_host_space<Space>();
  constexpr int block = kSolveBlock;
  auto solve = KOKKOS_LAMBDA(const Member& team) {
    if (info(s) != 0) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int i) { x(s, i) = Scalar(0); });
      return;
    }
    for (int b0 = 0; b0 < n; b0 += block) {
      const int b1 = b0 + block < n ? b0 + block : n;
      if (left_looking) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b0, b1),
                             [&](const int i) { rhs(i) -= row_times_vector(lu, i, 0, b0, rhs); });
        team.team_barrier();
      }
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (int i = b0 + 1; i < b1; ++i) rhs(i) -= row_times_vector(lu, i, b0, i, rhs);
      });
      team.team_barrier();
      if (!left_looking) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b1, n),
                             [&](const int i) { rhs(i) -= row_times_vector(lu, i, b0, b1, rhs); });
        team.team_barrier();
      }
    }
    for (int b1 = n; b1 > 0; b1 -= block) {
      const int b0 = b1 - block > 0 ? b1 - block : 0;
      if (left_looking) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b0, b1),
                             [&](const int i) { rhs(i) -= row_times_vector(lu, i, b1, n, rhs); });
        team.team_barrier();
      }
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (int i = b1 - 1; i >= b0; --i) rhs(i) = (rhs(i) - row_times_vector(lu, i, i + 1, b1, rhs)) / lu(i, i);
      });
      team.team_barrier();
      if (!left_looking) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, b0),
                             [&](const int i) { rhs(i) -= row_times_vector(lu, i, b0, b1, rhs); });
        team.team_barrier();
      }
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int i) { x(s, i) = rhs(i); });
  };
  Kokkos::parallel_for("solver::dense-solves", Policy(space, 1, whole_space_team(space, solve)), solve);
}

// Diagonal block [b0, b1) of the solves, device form: the block's triangle and its part of rhs
// staged in one team's scratch, solved there by one thread (the host form's arithmetic, on
// on-chip copies), written back. Lower: L unit lower triangular; else U.
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
  Policy policy(space, 1, is_host_space<Space>() ? 1 : 128);
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
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          const auto y = Kokkos::subview(t, Kokkos::ALL, m);
          if (lower) {
            for (int i = 1; i < m; ++i) t(i, m) -= row_times_vector(t, i, 0, i, y);
          } else {
            for (int i = m - 1; i >= 0; --i) t(i, m) = (t(i, m) - row_times_vector(t, i, i + 1, m, y)) / t(i, i);
          }
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m), [&](const int i) { rhs(b0 + i) = t(i, m); });
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

// System w.system of a and b into x: copy into the work space (and the largest |A|, the scale of
// its tiny pivot), then a panel of block_size columns at a time: factor it, apply its row swaps
// to the rest, solve for the block row of U, update the trailing matrix with one gemm. A signal
// is noticed between panels (`step` counts them across systems).
template <Form F = Form::OfSpace, class Scalar, class Space, class A, class B, class X, MINIAPP_KERNEL_UNIT>
void solve_system(const Space& space, Work<Scalar, Space>& w, const A& a, const B& b, const X& x, int block_size,
                  std::int64_t& step) {
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
  for (int k0 = 0; k0 < n; k0 += block_size) {
    interruption_point(space, step++);
    const int k1 = std::min(k0 + block_size, n);
    factor_columns<F>(space, w, k0, k1);
    swap_rows(space, w, k0, k1, 0, k0, false);
    swap_rows(space, w, k0, k1, k1, n, true);
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
