#pragma once
// N dense systems A x = b (seed 001, Example 1: np.linalg.solve / cupy.linalg.solve on random
// (systems, n, n) matrices and (systems, n, 1) right-hand sides), by LU with partial pivoting:
// many small systems batched one per thread or one per team, through KokkosBatched, or one large
// system by a right-looking blocked LU whose trailing update is KokkosBlas::gemm.

#include "miniapp/core/field.hpp"
#include "miniapp/core/kokkos_kernels_compat.hpp"
#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/random.hpp"
#include "miniapp/core/workload.hpp"
#include "miniapp/core/host_lu.hpp"
#include "miniapp/workloads/solver/lu_kernels.hpp"

#include <KokkosBlas3_gemm.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace miniapp::solver {

struct Params {
  std::size_t systems = 1;
  MatrixKind matrix = MatrixKind::Random;
  int block_size = 64;  // dense-blocked: columns per panel
};

inline const char* to_string(MatrixKind k) {
  switch (k) {
    case MatrixKind::Random: return "random";
    case MatrixKind::DiagonallyDominant: return "diagonally-dominant";
    case MatrixKind::Singular: return "singular";
  }
  return "?";
}

enum class Variant { BatchedThread, BatchedTeam, BatchedKokkosKernels, DenseBlocked };

inline Variant parse_variant(const std::string& name) {
  if (name == "batched-thread") return Variant::BatchedThread;
  if (name == "batched-team") return Variant::BatchedTeam;
  if (name == "batched-kokkos-kernels") return Variant::BatchedKokkosKernels;
  if (name == "dense-blocked") return Variant::DenseBlocked;
  throw std::invalid_argument("solver: unknown variant '" + name + "'");
}

// LAPACK's acceptance threshold for the scaled residual ||Ax - b|| / (||A|| ||x|| n eps).
inline constexpr double kResidualThreshold = 10.0;
// Systems also factored by the host reference LU (to tell singular systems the kernel missed):
// as many as fit in this many n^3 operations.
inline constexpr double kReferenceLuBudget = 1e9;

// batched-team keeps [A | b] of one system in team scratch: level 0 (on-chip on GPUs) while it
// fits, else level 1; beyond the level-1 limit the variant refuses the size.
template <class Scalar, class Space>
using ScratchMatrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::scratch_memory_space,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class Scalar, class Space>
std::size_t team_scratch_bytes(std::size_t n) {
  return ScratchMatrix<Scalar, Space>::shmem_size(n, n + 1);
}

template <class Space>
std::size_t team_scratch_limit(int level) {
  return static_cast<std::size_t>(Kokkos::TeamPolicy<Space>::scratch_size_max(level));
}

template <class Scalar, class Space>
std::size_t largest_team_system(int level) {
  std::size_t n = static_cast<std::size_t>(std::sqrt(static_cast<double>(team_scratch_limit<Space>(level)) / sizeof(Scalar)));
  while (n > 0 && team_scratch_bytes<Scalar, Space>(n) > team_scratch_limit<Space>(level)) --n;
  return n;
}

template <class Space>
std::string team_scratch_summary() {
  std::ostringstream s;
  s << space_name<Space>() << ": level 0 " << team_scratch_limit<Space>(0) / 1024 << " KiB (n <= "
    << largest_team_system<double, Space>(0) << "), level 1 " << team_scratch_limit<Space>(1) / (1024 * 1024)
    << " MiB (n <= " << largest_team_system<double, Space>(1) << ")";
  return s.str();
}

template <class Scalar, class Space>
class Kernel {
 public:
  using Device = Kokkos::Device<Space, typename Space::memory_space>;
  // One system per thread: on GPUs the system index runs fastest, so neighbouring threads touch
  // neighbouring addresses; on CPUs each thread's system is contiguous.
  using BatchLayout = std::conditional_t<is_host_space<Space>(), Kokkos::LayoutRight, Kokkos::LayoutLeft>;
  using BatchMatrices = Kokkos::View<Scalar***, BatchLayout, Device>;
  using BatchVectors = Kokkos::View<Scalar**, BatchLayout, Device>;
  using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, Device>;
  using Vector = Kokkos::View<Scalar*, Device>;
  // A leaf's rows contiguous on a CPU; on a GPU, a column's values contiguous across threads.
  using LeafMatrix = Kokkos::View<Scalar**, BatchLayout, Device>;

  Kernel(const Params& p, const std::string& variant, std::size_t n)
      : params_(p),
        variant_(parse_variant(variant)),
        n_(n),
        a_("A", p.systems, n, n),
        b_("b", p.systems, n),
        x_("x", p.systems, n),
        info_("info", p.systems) {
    switch (variant_) {
      case Variant::BatchedThread:
        batch_lu_ = BatchMatrices("solver::lu", p.systems, n, n);
        batch_rhs_ = BatchVectors("solver::rhs", p.systems, n);
        break;
      case Variant::BatchedKokkosKernels:
        if (!compat::kHasBatchedPivotingSolve)
          throw std::invalid_argument(std::string("solver: batched-kokkos-kernels ") +
                                      compat::kBatchedPivotingSolveRequirement);
        batch_lu_ = BatchMatrices("solver::lu", p.systems, n, n);
        batch_gesv_work_ = BatchMatrices("solver::gesv-work", p.systems, n, n + 4);
        break;
      case Variant::BatchedTeam:
        if (team_scratch_bytes<Scalar, Space>(n) > team_scratch_limit<Space>(1)) {
          std::ostringstream s;
          s << "solver: batched-team keeps one " << n << " x " << n << " system and its right-hand side in team "
            << "scratch, " << team_scratch_bytes<Scalar, Space>(n) << " bytes, but " << space_name<Space>()
            << " gives a team at most " << team_scratch_limit<Space>(1) << " bytes (n <= "
            << largest_team_system<Scalar, Space>(1) << " in " << (sizeof(Scalar) == 4 ? "float32" : "float64")
            << "); use batched-thread or dense-blocked for larger systems";
          throw std::invalid_argument(s.str());
        }
        break;
      case Variant::DenseBlocked:
        dense_lu_ = Matrix("solver::lu", n, n);
        dense_rhs_ = Vector("solver::rhs", n);
        pivots_ = Kokkos::View<int*, Device>("solver::pivots", n);
        dense_leaf_ = LeafMatrix("solver::leaf", n, kDenseLeaf);
        scale_ = Kokkos::View<Scalar, typename Space::memory_space>("solver::scale");
        break;
    }
  }

  std::vector<Transferable*> inputs() { return {&a_, &b_}; }
  std::vector<Transferable*> outputs() { return {&x_, &info_}; }

  void generate_inputs(std::uint64_t seed) {
    const auto a = a_.host;
    const auto b = b_.host;
    const MatrixKind kind = params_.matrix;
    for (std::size_t s = 0; s < params_.systems; ++s)
      for (std::size_t i = 0; i < n_; ++i) {
        for (std::size_t j = 0; j < n_; ++j) a(s, i, j) = static_cast<Scalar>(matrix_entry(kind, seed, n_, s, i, j));
        b(s, i) = static_cast<Scalar>(rhs_entry(seed, n_, s, i));
      }
  }

  void generate_inputs_on_device(const Space& space, std::uint64_t seed) {
    const auto a = a_.device;
    const auto b = b_.device;
    const MatrixKind kind = params_.matrix;
    const std::uint64_t n = n_;
    Kokkos::parallel_for(
        "solver::generate",
        Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {0, 0},
                                                      {static_cast<std::int64_t>(params_.systems), std::int64_t(n)}),
        KOKKOS_LAMBDA(const std::int64_t s, const std::int64_t i) {
          for (std::uint64_t j = 0; j < n; ++j)
            a(s, i, j) = static_cast<Scalar>(matrix_entry(kind, seed, n, std::uint64_t(s), std::uint64_t(i), j));
          b(s, i) = static_cast<Scalar>(rhs_entry(seed, n, std::uint64_t(s), std::uint64_t(i)));
        });
  }

  void compute(const Space& space) {
    switch (variant_) {
      case Variant::BatchedThread: batched_thread(space); break;
      case Variant::BatchedTeam: batched_team(space); break;
      case Variant::BatchedKokkosKernels: batched_kokkos_kernels(space); break;
      case Variant::DenseBlocked:
        for (std::size_t s = 0; s < params_.systems; ++s) dense_blocked(space, s);
        break;
    }
  }

  WorkEstimate work() const {
    const double n = static_cast<double>(n_);
    const double systems = static_cast<double>(params_.systems);
    return {systems * (2.0 / 3.0 * n * n * n + 2.0 * n * n), static_cast<double>(a_.bytes() + b_.bytes()),
            static_cast<double>(x_.bytes())};
  }

  Verification verify(std::optional<double> tolerance) const;

  // Direct access for tests.
  Field<Scalar***, Space>& matrices() { return a_; }
  Field<Scalar**, Space>& rhs() { return b_; }
  Field<Scalar**, Space>& solutions() { return x_; }
  Field<int*, Space>& info() { return info_; }

  // The kernel launchers are public: CUDA extended lambdas may not live in private or
  // protected member functions.
  // A pivot at most n * eps * max|A| counts as zero: the system is singular to working precision.
  Scalar tiny_factor() const { return static_cast<Scalar>(n_) * std::numeric_limits<Scalar>::epsilon(); }

  void batched_thread(const Space& space) {
    const auto a = a_.device;
    const auto b = b_.device;
    const auto x = x_.device;
    const auto info = info_.device;
    const auto lu = batch_lu_;
    const auto rhs = batch_rhs_;
    const int n = static_cast<int>(n_);
    const Scalar tiny_factor = this->tiny_factor();
    Kokkos::parallel_for(
        "solver::batched-thread", Kokkos::RangePolicy<Space>(space, 0, params_.systems),
        KOKKOS_LAMBDA(const std::size_t s) {
          const auto m = Kokkos::subview(lu, s, Kokkos::ALL, Kokkos::ALL);
          const auto r = Kokkos::subview(rhs, s, Kokkos::ALL);
          Scalar scale = 0;
          for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) {
              m(i, j) = a(s, i, j);
              scale = compat::math::fabs(m(i, j)) > scale ? compat::math::fabs(m(i, j)) : scale;
            }
            r(i) = b(s, i);
          }
          const int result = lu_solve_one_thread(m, r, n, tiny_factor * scale);
          info(s) = result;
          for (int i = 0; i < n; ++i) x(s, i) = result == 0 ? r(i) : Scalar(0);
        });
  }

  void batched_team(const Space& space) {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Member = typename Policy::member_type;
    using Scratch = ScratchMatrix<Scalar, Space>;
    const auto a = a_.device;
    const auto b = b_.device;
    const auto x = x_.device;
    const auto info = info_.device;
    const int n = static_cast<int>(n_);
    const Scalar tiny_factor = this->tiny_factor();
    const std::size_t bytes = team_scratch_bytes<Scalar, Space>(n_);
    const int level = bytes <= team_scratch_limit<Space>(0) ? 0 : 1;
    // Rows go across the team's threads, columns across vector lanes (GPUs only).
    const int lanes = is_host_space<Space>() ? 1 : n <= 8 ? 8 : n <= 16 ? 16 : 32;
    Policy policy(space, static_cast<int>(params_.systems), Kokkos::AUTO, lanes);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    Kokkos::parallel_for(
        "solver::batched-team", policy, KOKKOS_LAMBDA(const Member& team) {
          const int s = team.league_rank();
          const Scratch m(team.team_scratch(level), n, n + 1);
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
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n),
                               [&](const int i) { x(s, i) = result == 0 ? m(i, n) : Scalar(0); });
          Kokkos::single(Kokkos::PerTeam(team), [&]() { info(s) = result; });
        });
  }

  void batched_kokkos_kernels(const Space& space) {
    const auto a = a_.device;
    const auto b = b_.device;
    const auto x = x_.device;
    const auto info = info_.device;
    const auto lu = batch_lu_;
    const auto work = batch_gesv_work_;
    const int n = static_cast<int>(n_);
    // Gesv scales each column to a largest entry of 1 before factoring.
    const Scalar tiny = tiny_factor();
    Kokkos::parallel_for(
        "solver::batched-kokkos-kernels", Kokkos::RangePolicy<Space>(space, 0, params_.systems),
        KOKKOS_LAMBDA(const std::size_t s) {
          const auto m = Kokkos::subview(lu, s, Kokkos::ALL, Kokkos::ALL);
          const auto w = Kokkos::subview(work, s, Kokkos::ALL, Kokkos::ALL);
          const auto xs = Kokkos::subview(x, s, Kokkos::ALL);
          const auto bs = Kokkos::subview(b, s, Kokkos::ALL);
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) m(i, j) = a(s, i, j);
          const int failed = compat::batched_pivoting_solve(m, xs, bs, w);
          // The factored, permuted matrix is w(:, 0:n): its first tiny diagonal entry names the column.
          int result = 0;
          for (int k = 0; k < n && result == 0; ++k)
            if (!(compat::math::fabs(w(k, k)) > tiny)) result = k + 1;
          if (failed != 0 && result == 0) result = 1;
          info(s) = result;
          if (result != 0)
            for (int i = 0; i < n; ++i) xs(i) = Scalar(0);
        });
  }

  // Right-looking blocked LU of system s with partial pivoting (LAPACK's getrf order): factor a
  // panel of block_size columns (recursively, dense_factor_columns), apply its row swaps to the
  // rest, solve for the block row of U, update the trailing matrix with one gemm; then the two
  // triangular solves.
  void dense_blocked(const Space& space, std::size_t system) {
    const auto a = a_.device;
    const auto b = b_.device;
    const auto info = info_.device;
    const auto lu = dense_lu_;
    const auto rhs = dense_rhs_;
    const auto scale = scale_;
    const int n = static_cast<int>(n_);
    const int s = static_cast<int>(system);

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
        Kokkos::Max<Scalar, typename Space::memory_space>(scale));

    for (int k0 = 0; k0 < n; k0 += params_.block_size) {
      const int k1 = std::min(k0 + params_.block_size, n);
      dense_factor_columns(space, s, k0, k1);
      dense_swap_rows(space, s, k0, k1, 0, k0, false);
      dense_swap_rows(space, s, k0, k1, k1, n, true);
      if (k1 == n) break;
      dense_lower_solve(space, s, k0, k1, k1, n);
      // A22 -= L21 U12. After a zero pivot this computes with finite leftovers; nothing divides by it.
      dense_update(space, k1, n, k0, k1, k1, n);
    }
    dense_solves(space, s);
  }

  // Columns a leaf of the recursive panel factorisation handles one at a time: the leaf's rows of
  // n x kDenseLeaf values stay in cache while each column is eliminated.
  static constexpr int kDenseLeaf = 16;
  // Columns one thread of the swap and triangular-solve kernels handles: a run of contiguous
  // values to vectorise over on a CPU; one column per thread (neighbours coalesce) on a GPU.
  static constexpr int kDenseColumnChunk = is_host_space<Space>() ? 64 : 1;
  // Rows per diagonal block of the two final triangular solves.
  static constexpr int kDenseSolveBlock = 64;

  // Where the recursive factorisation and triangular solve halve an extent: a multiple of the leaf,
  // at least one leaf.
  static int recursion_split(int extent) { return std::max(kDenseLeaf, extent / 2 / kDenseLeaf * kDenseLeaf); }

  // LU with partial pivoting of columns [c0, c1), rows [c0, n), whose left columns are final
  // (LAPACK's dgetrf2): the left half is factored, its swaps applied to the right half, the right
  // half updated by a triangular solve and a gemm, then factored in turn; its swaps are applied to
  // the left half. Most of the panel's flops so go through gemm. The recursion is on the host and
  // only launches kernels.
  void dense_factor_columns(const Space& space, int s, int c0, int c1) {
    const int n = static_cast<int>(n_);
    const int width = c1 - c0;
    if (width <= kDenseLeaf) {
      dense_factor_leaf(space, s, c0, c1);
      return;
    }
    const int cm = c0 + recursion_split(width);
    dense_factor_columns(space, s, c0, cm);
    dense_swap_rows(space, s, c0, cm, cm, c1, false);
    dense_lower_solve(space, s, c0, cm, cm, c1);
    dense_update(space, cm, n, c0, cm, cm, c1);
    dense_factor_columns(space, s, cm, c1);
    dense_swap_rows(space, s, cm, c1, c0, cm, false);
  }

  // Columns [c0, c1), rows [c0, n), one column after the other by one team, on a compact copy
  // (dense_leaf_): in place, every row of the leaf is on a page of its own (the rows of lu are
  // n values apart), and each column's pass would miss the TLB once per row. The pass that
  // eliminates column j also finds the pivot of column j + 1 (a team MaxLoc reduction), so each
  // column costs one pass over the rows and one rendezvous (two when rows are swapped).
  void dense_factor_leaf(const Space& space, int s, int c0, int c1) {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Member = typename Policy::member_type;
    using MaxLoc = Kokkos::MaxLoc<Scalar, int>;
    using Best = typename MaxLoc::value_type;
    const auto info = info_.device;
    const auto lu = dense_lu_;
    const auto leaf = dense_leaf_;
    const auto pivots = pivots_;
    const auto scale = scale_;
    const int n = static_cast<int>(n_);
    const int rows = n - c0;
    const int width = c1 - c0;
    const Scalar tiny_factor = this->tiny_factor();
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
  void dense_swap_rows(const Space& space, int s, int j0, int j1, int c_lo, int c_hi, bool with_rhs) {
    const int chunks = (c_hi - c_lo + kDenseColumnChunk - 1) / kDenseColumnChunk;
    if (chunks + (with_rhs ? 1 : 0) == 0) return;
    const auto info = info_.device;
    const auto lu = dense_lu_;
    const auto rhs = dense_rhs_;
    const auto pivots = pivots_;
    constexpr int chunk_width = kDenseColumnChunk;
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

  // A(r0:r1, c0:c1) = L(r0:r1, r0:r1)^-1 A(r0:r1, c0:c1), L unit lower triangular: recursively
  // halved so that most flops are a gemm; leaves row by row, each row's update vectorised over a
  // chunk of columns.
  void dense_lower_solve(const Space& space, int s, int r0, int r1, int c0, int c1) {
    if (c1 <= c0) return;
    const int rows = r1 - r0;
    if (rows > kDenseLeaf) {
      const int rm = r0 + recursion_split(rows);
      dense_lower_solve(space, s, r0, rm, c0, c1);
      dense_update(space, rm, r1, r0, rm, c0, c1);
      dense_lower_solve(space, s, rm, r1, c0, c1);
      return;
    }
    const auto info = info_.device;
    const auto lu = dense_lu_;
    constexpr int chunk_width = kDenseColumnChunk;
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

  // A(r0:r1, c0:c1) -= A(r0:r1, k0:k1) A(k0:k1, c0:c1).
  void dense_update(const Space& space, int r0, int r1, int k0, int k1, int c0, int c1) {
    using Cols = Kokkos::pair<int, int>;
    (void)space;  // KokkosBlas::gemm of these versions runs on the default instance of the space
    if (r1 <= r0 || c1 <= c0 || k1 <= k0) return;
    const auto lu = dense_lu_;
    KokkosBlas::gemm("N", "N", Scalar(-1), Kokkos::subview(lu, Cols(r0, r1), Cols(k0, k1)),
                     Kokkos::subview(lu, Cols(k0, k1), Cols(c0, c1)), Scalar(1),
                     Kokkos::subview(lu, Cols(r0, r1), Cols(c0, c1)));
  }

  // L y = P b, then U x = y, a diagonal block at a time: one member solves the block, then the
  // team updates the rest of b with the block's columns (row-wise dot products of contiguous values).
  void dense_solves(const Space& space, int s) {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Member = typename Policy::member_type;
    const auto x = x_.device;
    const auto info = info_.device;
    const auto lu = dense_lu_;
    const auto rhs = dense_rhs_;
    const int n = static_cast<int>(n_);
    constexpr int block = kDenseSolveBlock;
    auto solves = KOKKOS_LAMBDA(const Member& team) {
      if (info(s) != 0) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int i) { x(s, i) = Scalar(0); });
        return;
      }
      for (int b0 = 0; b0 < n; b0 += block) {
        const int b1 = b0 + block < n ? b0 + block : n;
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          for (int i = b0 + 1; i < b1; ++i) {
            Scalar sum = rhs(i);
            for (int j = b0; j < i; ++j) sum -= lu(i, j) * rhs(j);
            rhs(i) = sum;
          }
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b1, n),
                             [&](const int i) { rhs(i) -= row_times_vector(lu, i, b0, b1, rhs); });
        team.team_barrier();
      }
      for (int b1 = n; b1 > 0; b1 -= block) {
        const int b0 = b1 - block > 0 ? b1 - block : 0;
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          for (int i = b1 - 1; i >= b0; --i) {
            Scalar sum = rhs(i);
            for (int j = i + 1; j < b1; ++j) sum -= lu(i, j) * rhs(j);
            rhs(i) = sum / lu(i, i);
          }
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, b0),
                             [&](const int i) { rhs(i) -= row_times_vector(lu, i, b0, b1, rhs); });
        team.team_barrier();
      }
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int i) { x(s, i) = rhs(i); });
    };
    Kokkos::parallel_for("solver::dense-solves", Policy(space, 1, whole_space_team(space, solves)), solves);
  }

  // sum_j m(i, j) v(j) over j in [j0, j1), in four independent sums: one running sum would be a
  // chain of dependent adds the compiler may not reorder.
  template <class MatrixView, class VectorView>
  static KOKKOS_INLINE_FUNCTION Scalar row_times_vector(const MatrixView& m, int i, int j0, int j1,
                                                        const VectorView& v) {
    Scalar s0 = 0, s1 = 0, s2 = 0, s3 = 0;
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

  // One team spanning the host's threads, or a large block on a GPU, for the sequential steps.
  template <class Functor>
  static int whole_space_team(const Space& space, const Functor& f) {
    const int largest = Kokkos::TeamPolicy<Space>(space, 1, 1).team_size_max(f, Kokkos::ParallelForTag());
    return std::max(1, std::min(largest, is_host_space<Space>() ? static_cast<int>(space.concurrency()) : 256));
  }

 private:
  Params params_;
  Variant variant_;
  std::size_t n_;
  Field<Scalar***, Space> a_;
  Field<Scalar**, Space> b_;
  Field<Scalar**, Space> x_;
  Field<int*, Space> info_;  // per system: 0, or the column + 1 of the first zero pivot (LAPACK's info)
  BatchMatrices batch_lu_;
  BatchVectors batch_rhs_;
  BatchMatrices batch_gesv_work_;
  Matrix dense_lu_;
  Vector dense_rhs_;
  Kokkos::View<int*, Device> pivots_;
  LeafMatrix dense_leaf_;  // dense-blocked: the leaf of the panel being factored
  Kokkos::View<Scalar, typename Space::memory_space> scale_;
};

// The residual of every system in long double from the original A and b (host mirrors), and a
// host LU (host_lu.hpp) on as many systems as the budget allows, to catch a singular system the
// kernel did not flag.
template <class Scalar, class Space>
Verification Kernel<Scalar, Space>::verify(std::optional<double> tolerance) const {
  Verification v;
  v.checked = true;
  v.tolerance = tolerance.value_or(kResidualThreshold);
  const auto a = a_.host;
  const auto b = b_.host;
  const auto x = x_.host;
  const auto info = info_.host;
  const std::size_t n = n_;
  const long double eps = std::numeric_limits<Scalar>::epsilon();
  const double n3 = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  // None for one large system: a serial host LU of n = 10000 would take longer than the solve.
  const std::size_t reference_systems =
      std::min(params_.systems, static_cast<std::size_t>(kReferenceLuBudget / n3));
  std::size_t singular = 0, inaccurate = 0;
  std::string first_problem;
  auto note = [&](const std::string& problem) {
    if (first_problem.empty()) first_problem = problem;
  };
  std::vector<double> ref_a(n * n), ref_b(n);
  for (std::size_t s = 0; s < params_.systems; ++s) {
    if (info(s) != 0) {
      ++singular;
      note("system " + std::to_string(s) + " is singular: zero pivot in column " + std::to_string(info(s) - 1));
      continue;
    }
    long double norm_a = 0, norm_x = 0, norm_r = 0;
    std::size_t worst_row = 0;
    long double worst_ax = 0;
    for (std::size_t i = 0; i < n; ++i) {
      long double ax = 0, row = 0;
      for (std::size_t j = 0; j < n; ++j) {
        ax += static_cast<long double>(a(s, i, j)) * static_cast<long double>(x(s, j));
        row += std::fabs(static_cast<long double>(a(s, i, j)));
      }
      const long double r = std::fabs(ax - static_cast<long double>(b(s, i)));
      norm_a = std::max(norm_a, row);
      norm_x = std::max(norm_x, std::fabs(static_cast<long double>(x(s, i))));
      if (!(r <= norm_r)) norm_r = r, worst_row = i, worst_ax = ax;  // NaN-safe: a NaN becomes the worst
    }
    const long double denominator = norm_a * norm_x * static_cast<long double>(n) * eps;
    const double scaled = denominator > 0 ? static_cast<double>(norm_r / denominator) : (norm_r == 0 ? 0.0 : INFINITY);
    v.max_abs_error = std::max(v.max_abs_error, static_cast<double>(norm_r));
    v.max_rel_error = std::max(v.max_rel_error, std::isnan(scaled) ? INFINITY : scaled);
    if (!(scaled < v.tolerance)) {
      ++inaccurate;
      std::ostringstream m;
      m.precision(17);
      m << "system " << s << ": scaled residual " << scaled << ", largest in row " << worst_row << ": (Ax)["
        << worst_row << "] = " << static_cast<double>(worst_ax) << ", b[" << worst_row << "] = " << b(s, worst_row);
      note(m.str());
      continue;
    }
    if (s < reference_systems) {
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) ref_a[i * n + j] = static_cast<double>(a(s, i, j));
        ref_b[i] = static_cast<double>(b(s, i));
      }
      if (const auto column = host_lu_solve(ref_a, ref_b, n)) {
        ++singular;
        note("system " + std::to_string(s) + " is singular (host reference LU: zero pivot in column " +
             std::to_string(*column) + ") but the kernel reported no zero pivot");
      }
    }
  }
  v.passed = singular == 0 && inaccurate == 0;
  v.reference = "scaled residual ||Ax-b||/(||A|| ||x|| n eps) in long double from the original A and b; host LU on " +
                std::to_string(reference_systems) + " of " + std::to_string(params_.systems) + " systems";
  std::ostringstream summary;
  summary << params_.systems << " systems of order " << n << " checked; max scaled residual " << v.max_rel_error
          << " (threshold " << v.tolerance << ")";
  if (singular > 0) summary << "; " << singular << " singular";
  if (inaccurate > 0) summary << "; " << inaccurate << " above the threshold";
  if (!first_problem.empty()) summary << "; first: " << first_problem;
  v.detail = summary.str();
  return v;
}

struct SolverWorkload {
  static constexpr const char* name = "solver";
  static constexpr const char* summary = "N dense systems A x = b by LU with partial pivoting (seed 001, Example 1)";
  static constexpr const char* size_meaning = "order n of each system (A is n x n; key `systems` sets how many)";
  using Params = solver::Params;
  template <class Scalar, class Space>
  using Kernel = solver::Kernel<Scalar, Space>;

  static std::vector<VariantInfo> variants() {
    std::string limits;
    for_each_space([&](auto tag) {
      limits += (limits.empty() ? "" : "; ") + team_scratch_summary<typename decltype(tag)::type>();
    });
    return {
        {"batched-thread", "one thread per system, LU with partial pivoting on its own slice of a work View", ""},
        {"batched-team",
         "one team per system, [A | b] in team scratch, pivot search as a team MaxLoc reduction; scratch per team "
         "(float64): " + limits,
         ""},
        {"batched-kokkos-kernels", "one thread per system, KokkosBatched::SerialGesv (static pivoting)",
         compat::kHasBatchedPivotingSolve ? "" : compat::kBatchedPivotingSolveRequirement},
        {"dense-blocked",
         "right-looking blocked LU with partial pivoting, trailing update by KokkosBlas::gemm, then the two "
         "triangular solves; systems solved one after another",
         ""},
    };
  }

  // Inputs and outputs, plus the largest work space of any variant (the check does not know which runs).
  static Footprint footprint(const Params& p, const MeasurementSpec& spec) {
    const std::size_t n = spec.size, scalar_bytes = miniapp::scalar_bytes(spec.precision);
    const std::size_t per_system = n * n + 2 * n;  // A, b, x
    const std::size_t batch_work = compat::kHasBatchedPivotingSolve ? 2 * n * n + 4 * n : n * n + n;
    return {p.systems * ((per_system + batch_work) * scalar_bytes + sizeof(int)), 0};
  }

  static std::vector<std::pair<std::string, std::string>> describe(const Params& p) {
    return {{"systems", std::to_string(p.systems)},
            {"matrix", to_string(p.matrix)},
            {"block_size", std::to_string(p.block_size)}};
  }

  static Params parse(MapReader& r) {
    Params p;
    if (auto s = r.integer("systems", 1, 1000000000)) p.systems = static_cast<std::size_t>(*s);
    if (auto m = r.choice("matrix", {"random", "diagonally-dominant", "singular"}))
      p.matrix = *m == "random" ? MatrixKind::Random
                 : *m == "singular" ? MatrixKind::Singular
                                    : MatrixKind::DiagonallyDominant;
    if (auto b = r.integer("block_size", 1, 4096)) p.block_size = static_cast<int>(*b);
    return p;
  }
};

}  // namespace miniapp::solver
