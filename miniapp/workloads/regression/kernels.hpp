#pragma once
// The regression kernels, written once for every execution space: the data, the start of a fit,
// the gradient sums of one step (fused: one pass over X; blas: two gemv), and the update that
// records the loss. Free functions and functors: CUDA extended lambdas may not live in private
// member functions. The hand-vectorised CPU form of the fused sums is in packed_gradient.hpp.

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/host_simd.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/random.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/workloads/regression/packed_gradient.hpp"
#include "miniapp/workloads/regression/team_gradient.hpp"
#include "miniapp/workloads/regression/team_gradient_step.hpp"

#include "miniapp/core/kokkos_kernels_compat.hpp"

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace miniapp::regression {

// Independent streams of one seed: the data, the noise, the true coefficients.
KOKKOS_INLINE_FUNCTION std::uint64_t noise_stream(std::uint64_t seed) { return seed ^ 0x6E6F697365ULL; }
KOKKOS_INLINE_FUNCTION std::uint64_t beta_stream(std::uint64_t seed) { return seed ^ 0x62657461ULL; }

// Coefficient j of the model the data are drawn from (the last one multiplies the intercept).
KOKKOS_INLINE_FUNCTION double true_coefficient(bool single_variable, std::uint64_t beta_seed, std::size_t j) {
  if (single_variable) return j == 0 ? 2.0 : 5.0;
  // np.random.randint(1, 10): uniform on 1..9 (9 u < 9, truncation is floor for u >= 0).
  return 1.0 + static_cast<double>(static_cast<int>(9.0 * uniform01(beta_seed, j)));
}

// Stores row i of X as generate_row produces it. A functor rather than a lambda: the host
// generator's lambda would be host-only, which CUDA refuses inside a host-device function.
template <class XView>
struct RowSetter {
  XView x;
  std::size_t i;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t j, double v) const {
    x(i, j) = static_cast<typename XView::non_const_value_type>(v);
  }
};

// Row i of the data, in double: X(i, 0..cols-1) and y_i. Both generators call it, so host and
// device data are the same values (up to the last bit of log/cos in the noise).
template <class Row>
KOKKOS_INLINE_FUNCTION double generate_row(bool single_variable, std::size_t n, std::size_t cols, std::uint64_t seed,
                                           double noise, std::size_t i, Row&& set) {
  double y = noise * normal01(noise_stream(seed), i);
  if (single_variable) {
    // The seed sorts N uniforms; one uniform per stratum [i/N, (i+1)/N) is sorted by
    // construction and costs no sort (on the device either).
    const double x = (static_cast<double>(i) + uniform01(seed, i)) / static_cast<double>(n);
    set(0, x);
    y += 2.0 * x + 5.0;
  } else {
    const std::size_t features = cols - 1;
    for (std::size_t j = 0; j < features; ++j) {
      const double x = uniform01(seed, i * features + j);
      set(j, x);
      y += x * true_coefficient(false, beta_stream(seed), j);
    }
    y += true_coefficient(false, beta_stream(seed), features);
  }
  set(cols - 1, 1.0);
  return y;
}

// Partial sums in lanes: Width independent accumulators (by default one cache line of Scalars).
// Without -ffast-math a compiler may not reorder one chain of additions, so a single accumulator
// neither vectorises nor hides the add latency; lanes do both while every element is still added
// exactly once.
template <class Scalar, int Width = static_cast<int>(64 / sizeof(Scalar))>
struct Lanes {
  static_assert(Width == 2 || Width == 4 || Width == 8 || Width == 16, "lanes fold 16 -> 8 -> 4 -> 2 -> 1");
  static constexpr int kWidth = Width;
  Scalar v[Width];

  KOKKOS_INLINE_FUNCTION Lanes() {
    for (int l = 0; l < Width; ++l) v[l] = Scalar(0);
  }
  // Pairwise, one stage per loop with constant bounds (a loop with shrinking bounds stays
  // rolled and scalar).
  KOKKOS_INLINE_FUNCTION Scalar total() {
    for (int l = 8; l < Width; ++l) v[l - 8] += v[l];
    for (int l = 4; l < Width && l < 8; ++l) v[l - 4] += v[l];
    for (int l = 2; l < Width && l < 4; ++l) v[l - 2] += v[l];
    return v[0] + v[1];
  }
};

// One pass over X per step: sums[j] = sum_i X(i,j) r_i and sums[cols] = sum_i r_i^2 with
// r = X beta - y. A runtime-length array reduction (value_count), joined by Kokkos' default
// element-wise sum, so it needs no join() and builds on every backend and Kokkos version.
// Each call takes kRows rows of the row-major X and works along j, where a row is contiguous:
// the rows' dot products x_i.beta in lanes of one vector each (kRows x kWidth independent
// chains), then sums[j] += sum_l X(i_l, j) r_l in one loop over j that compilers vectorise as
// it stands, the rows read again from L1. A block costs one pass of loop overhead, column tail
// and load/store of the per-thread `sums` for kRows rows. A last, short block goes row by row.
template <class Scalar, class MemorySpace>
struct FusedGradient {
  static constexpr int kRows = 4;
  static constexpr int kWidth = static_cast<int>(32 / sizeof(Scalar));  // one AVX2 vector
  using value_type = Scalar[];
  Kokkos::View<const Scalar**, Kokkos::LayoutRight, MemorySpace> x;
  Kokkos::View<const Scalar*, Kokkos::LayoutRight, MemorySpace> y, beta;
  unsigned value_count;  // columns + 1

  static std::int64_t blocks(std::size_t n) { return static_cast<std::int64_t>((n + kRows - 1) / kRows); }

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t block, value_type sums) const {
    const std::int64_t first = block * kRows;
    const auto n = static_cast<std::int64_t>(x.extent(0));
    if (first + kRows <= n) {
      rows<kRows>(first, sums);
      return;
    }
    for (std::int64_t i = first; i < n; ++i) rows<1>(i, sums);
  }

  // One row's dot product, a loop of its own per row: GCC vectorises it along j, while the same
  // loop nested in one over the block's rows gets vectorised across rows, with shuffles.
  KOKKOS_INLINE_FUNCTION static Scalar dot(const Scalar* xi, const Scalar* b, const std::int64_t cols) {
    Lanes<Scalar, kWidth> lanes;
    std::int64_t j = 0;
    for (; j + kWidth <= cols; j += kWidth)
      for (int w = 0; w < kWidth; ++w) lanes.v[w] += xi[j + w] * b[j + w];
    // The column tail into its own sum: lanes indexed by a runtime count would live in memory.
    Scalar tail = 0;
    for (; j < cols; ++j) tail += xi[j] * b[j];
    return lanes.total() + tail;
  }

  template <int R>
  KOKKOS_INLINE_FUNCTION void rows(const std::int64_t first, value_type sums) const {
    const std::int64_t cols = value_count - 1;
    const Scalar* b = beta.data();
    const Scalar* xr[R];
    for (int l = 0; l < R; ++l) xr[l] = &x(first + l, 0);
    if (cols == 2) {
      // The single-variable fit, X = [x, 1]: loops of two columns cost more in set-up than in
      // work (docs/tuning-notes.md), so written out.
      Scalar g0 = 0, g1 = 0, rr = 0;
      for (int l = 0; l < R; ++l) {
        const Scalar r = xr[l][0] * b[0] + xr[l][1] * b[1] - y(first + l);
        g0 += xr[l][0] * r;
        g1 += xr[l][1] * r;
        rr += r * r;
      }
      sums[0] += g0;
      sums[1] += g1;
      sums[2] += rr;
      return;
    }
    Scalar r[R];
    Scalar rr = 0;
    for (int l = 0; l < R; ++l) {
      r[l] = dot(xr[l], b, cols) - y(first + l);
      rr += r[l] * r[l];
    }
    for (std::int64_t j = 0; j < cols; ++j) {
      Scalar g = sums[j];
      for (int l = 0; l < R; ++l) g += xr[l][j] * r[l];
      sums[j] = g;
    }
    sums[cols] += rr;
  }
};
// Rows first .. first + x.extent(0) - 1 of a problem of `total` rows (all of it when first is 0
// and total the extent: one MPI rank's part otherwise), generated as in the whole problem.
template <class X, class Y>
void generate_on_host(const X& x, const Y& y, bool single_variable, double noise, std::uint64_t seed,
                      std::size_t first = 0, std::size_t total = 0) {
  const std::size_t n = x.extent(0), cols = x.extent(1), all = total ? total : n;
  for (std::size_t i = 0; i < n; ++i)
    y(i) = static_cast<typename Y::value_type>(
        generate_row(single_variable, all, cols, seed, noise, first + i, RowSetter<X>{x, i}));
}

template <class Space, class X, class Y, MINIAPP_KERNEL_UNIT>
void generate(const Space& space, const X& x, const Y& y, bool single_variable, double noise, std::uint64_t seed,
              std::size_t first = 0, std::size_t total = 0) {
  const std::size_t n = x.extent(0), cols = x.extent(1), all = total ? total : n;
  Kokkos::parallel_for(
      "regression::generate", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const auto row = static_cast<std::size_t>(i);
        y(i) = static_cast<typename Y::value_type>(
            generate_row(single_variable, all, cols, seed, noise, first + row, RowSetter<X>{x, row}));
      });
}

// The state of one fit on the device: beta, the gradient sums of a step (sums[cols] = sum r^2),
// the loss of every step, the lowest loss and the growth floor, where the fit diverged, and the
// per-team totals of TeamGradient (device spaces' fused variant; empty elsewhere) and the counts
// of its teams done in a step in one launch (TeamGradientStep; 0 between launches).
template <class Scalar, class Space, class Beta, class Loss, class Diverged>
struct Fit {
  using View = Kokkos::View<Scalar*, Kokkos::LayoutRight, typename Space::memory_space>;
  using Counter = Kokkos::View<unsigned*, typename Space::memory_space>;
  Beta beta;
  Loss loss;
  Diverged diverged_at;
  View sums, best, partials;
  Counter teams_done;
};

// beta = 0, nothing diverged, no loss seen.
template <class Space, class F, MINIAPP_KERNEL_UNIT>
void start(const Space& space, const F& fit) {
  using Scalar = typename F::View::value_type;
  const auto beta = fit.beta;
  const auto best = fit.best;
  const auto diverged_at = fit.diverged_at;
  const auto cols = static_cast<std::int64_t>(beta.extent(0));
  Kokkos::parallel_for(
      "regression::start", Kokkos::RangePolicy<Space>(space, 0, 1), KOKKOS_LAMBDA(const int) {
        for (std::int64_t j = 0; j < cols; ++j) beta(j) = Scalar(0);
        best(0) = Scalar(-1);
        best(1) = Scalar(0);
        diverged_at(0) = -1;
      });
}

// One pass over X by FusedGradient (a range of blocks of rows): the gradient sums and the sum of
// squared residuals into sums.
template <class Space, class X, class Y, class Beta, class Sums>
void range_gradient_sums(const Space& space, const X& x, const Y& y, const Beta& beta, const Sums& sums) {
  using Scalar = typename Sums::non_const_value_type;
  const FusedGradient<Scalar, typename Space::memory_space> f{x, y, beta, static_cast<unsigned>(x.extent(1) + 1)};
  Kokkos::parallel_reduce("regression::fused",
                          Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, f.blocks(x.extent(0))),
                          f, sums);
}

// One pass over X: the gradient sums and the sum of squared residuals into fit.sums. Host spaces:
// PackedGradient where a row fills a pack, else FusedGradient; device spaces: TeamGradient (4 or 8
// lanes across each row) where a row fills its lanes and its scratch fits, in its register form
// for rows of up to kTeamGradientRegisterColumns columns; rows of 1 to 3 columns in the register
// form on one lane, a thread a row (lanes across so short a row sit idle: at 2 columns on the
// H200 a warp per row took several times FusedGradient's step; docs/tuning-notes.md); else (a scratch that does not fit) FusedGradient.
template <class Space, class X, class Y, class F, MINIAPP_KERNEL_UNIT>
void fused_sums(const Space& space, const X& x, const Y& y, const F& fit) {
  using Scalar = typename F::View::value_type;
  const std::size_t cols = x.extent(1);
#if MINIAPP_HOST_SIMD
  if constexpr (is_host_space<Space>()) {
    if (cols >= static_cast<std::size_t>(simd::Pack<Scalar>::width)) {
      PackedGradient<Scalar, typename Space::memory_space> f{x, y, fit.beta, static_cast<unsigned>(cols + 1)};
      const std::int64_t calls = f.calls(x.extent(0));
      Kokkos::parallel_reduce("regression::fused",
                              Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, calls), f, fit.sums);
      return;
    }
  }
#endif
  if constexpr (!is_host_space<Space>()) {
    if (with_team_form<Scalar, Space>(cols, [&](auto lanes, auto columns) {
          team_gradient_sums<decltype(lanes)::value, kTeamGradientChunk, decltype(columns)::value>(
              space, x, y, fit.beta, fit.partials, fit.sums);
        }))
      return;
  }
  range_gradient_sums(space, x, y, fit.beta, fit.sums);
}

// r = X beta - y and g = (2/N) X^T r by gemv, N = `total` rows (X's own extent, or under MPI the
// whole problem's, of which X holds one rank's part). X is row-major, which BLAS gemv (and Kokkos
// Kernels' TPL path to it) does not take: seen as the column-major P+1 x N matrix X^T, the same
// memory is what vendor gemv reads fastest (Kokkos Kernels' own row-major "T" product is far
// slower; docs/tuning-notes.md).
template <class Space, class X, class Y, class R, class F, MINIAPP_KERNEL_UNIT>
void blas_sums(const Space& space, const X& x, const Y& y, const R& residual, const F& fit, std::size_t total = 0) {
  using Scalar = typename F::View::value_type;
  using MemorySpace = typename Space::memory_space;
  const std::size_t n = x.extent(0), cols = x.extent(1);
  const std::size_t all = total ? total : n;
  const Kokkos::View<const Scalar**, Kokkos::LayoutLeft, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> xt(
      x.data(), cols, n);
  const auto r = residual;
  Kokkos::deep_copy(space, r, y);
  compat::gemv("T", Scalar(1), xt, fit.beta, Scalar(-1), r);
  Kokkos::parallel_reduce(
      "regression::loss", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, Scalar& s) { s += r(i) * r(i); }, Kokkos::subview(fit.sums, cols));
  const auto gradient = Kokkos::subview(fit.sums, std::make_pair(std::size_t(0), cols));
  compat::gemv("N", Scalar(2) / static_cast<Scalar>(all), xt, r, Scalar(0), gradient);
}

// The rule of step k, on values: the loss l is recorded by the caller; the fit stops updating once
// l is not finite or grew (above the lowest so far, `lowest`, by `growth`, plus `floor`:
// floor_scale times the first loss); otherwise beta -= step * sums. lowest < 0: no loss seen yet.
template <class Scalar, class Beta, class Sums>
KOKKOS_INLINE_FUNCTION void gradient_step(const std::int64_t k, const Scalar l, const Scalar step, const Scalar growth,
                                          const Scalar floor_scale, Scalar& lowest, Scalar& floor,
                                          std::int64_t& diverged_at, const Beta& beta, const Sums& sums,
                                          const std::int64_t cols) {
  if (diverged_at >= 0) return;
  if (!compat::math::isfinite(l) || (lowest >= Scalar(0) && l > lowest * (Scalar(1) + growth) + floor)) {
    diverged_at = k;
    return;
  }
  if (lowest < Scalar(0)) floor = floor_scale * l;
  if (lowest < Scalar(0) || l < lowest) lowest = l;
  for (std::int64_t j = 0; j < cols; ++j) beta[j] -= step * sums[j];
}

// Step k's update on one thread, on the fit's views: records the loss, then gradient_step.
template <class F, class Scalar>
struct StepUpdate {
  F fit;
  Scalar step, inv_n, growth;
  Scalar floor_scale = Scalar(64) * std::numeric_limits<Scalar>::epsilon();  // on the host: no constexpr on devices

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const auto cols = static_cast<std::int64_t>(fit.beta.extent(0));
    const Scalar l = fit.sums(cols) * inv_n;
    fit.loss(k) = l;
    Scalar lowest = fit.best(0), floor = fit.best(1);
    std::int64_t diverged_at = fit.diverged_at(0);
    gradient_step(k, l, step, growth, floor_scale, lowest, floor, diverged_at, fit.beta.data(), fit.sums.data(), cols);
    fit.best(0) = lowest;
    fit.best(1) = floor;
    fit.diverged_at(0) = diverged_at;
  }
};

// A launch of one index, k: the update of step k.
template <class Space, class F, class Scalar>
void update(const Space& space, const StepUpdate<F, Scalar>& u, std::int64_t k) {
  Kokkos::parallel_for("regression::update",
                       Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, k, k + 1), u);
}

// Step k of the fused variant (its sums, then update k). Where fused_sums takes TeamGradient
// (device spaces) and `one_launch`, the whole step is one launch (team_gradient_step: the last
// team to finish adds the teams' totals and updates beta); else fused_sums and update's launch.
template <class Space, class X, class Y, class F, class Scalar, MINIAPP_KERNEL_UNIT>
void fused_step(const Space& space, const X& x, const Y& y, const StepUpdate<F, Scalar>& u, const std::int64_t k,
                const bool one_launch = true) {
  const F& fit = u.fit;
  if constexpr (!is_host_space<Space>()) {
    if (one_launch && with_team_form<Scalar, Space>(x.extent(1), [&](auto lanes, auto columns) {
          team_gradient_step<decltype(lanes)::value, kTeamGradientChunk, decltype(columns)::value>(
              space, x, y, fit.beta, fit.partials, fit.sums, fit.teams_done, u, k);
        }))
      return;
  }
  fused_sums(space, x, y, fit);
  update(space, u, k);
}

}  // namespace miniapp::regression
