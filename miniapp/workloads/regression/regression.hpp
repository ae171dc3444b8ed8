#pragma once
// Linear regression by full-batch gradient descent (seed 001, Example 2, JAX's fit_model):
// beta <- beta - lr * (2/N) X^T (X beta - y), from beta = 0, for a fixed number of steps; the
// loss is the mean squared error. X = [data, 1] (an intercept column).
//   features = 0: the single-variable model y = 2x + 5 + noise N(0,1), x in [0, 1) sorted;
//   features = P: X = [U(0,1)^(N x P), 1], integer beta in 1..9, y = X beta + noise N(0,1).

#include "miniapp/core/field.hpp"
#include "miniapp/core/host_simd.hpp"
#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/random.hpp"
#include "miniapp/core/workload.hpp"
#include "miniapp/core/host_lu.hpp"

#include <KokkosBlas2_gemv.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace miniapp::regression {

struct Params {
  int features = 0;  // 0: the single-variable model of the seed
  std::int64_t iterations = 10000;
  std::optional<double> learning_rate;  // default: the seed's, 0.1 (single) or 0.001 (multivariate)
  std::optional<double> noise;          // default: the seed's, 0.1 (single) or 1 (multivariate)

  bool single_variable() const { return features == 0; }
  std::size_t columns() const { return single_variable() ? 2 : static_cast<std::size_t>(features) + 1; }
  double rate() const { return learning_rate.value_or(single_variable() ? 0.1 : 0.001); }
  double noise_scale() const { return noise.value_or(single_variable() ? 0.1 : 1.0); }
};

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
      // work (4.5 ms per step at N = 10^6 against 1.7 for blas), so written out.
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

#if MINIAPP_HOST_SIMD
// The same sums as FusedGradient, vectorised by hand for CPUs, where FusedGradient stays
// compute-bound: at N = 10^6, P = 50 it took 1.4-1.6x one streaming read of X, and its loops
// alone, with X in cache, took longer than that read from memory. Rows are cut into packs of the
// SIMD width; the last pack of a row ends at the row's end, and the columns it repeats are
// masked out of beta (dot products) or left out of the sums (gradient). Needs columns >= the
// pack's width; narrower models take FusedGradient. Each call takes kRowsPerCall rows, in one of
// two ways:
// - Models of up to kMaxResidentPacks packs (P <= 127 float32, P <= 63 float64): a row at a time,
//   its packs held in registers from its dot product to its update, so X is loaded once, and the
//   gradient sums in registers for the whole call. The pack count is a template parameter, which
//   is what lets the compiler keep both arrays in registers.
// - Wider models: blocks of one pack's width of rows (8 float32 or 4 float64), whose dot products
//   come out of their accumulators in one transpose_sum, one lane per row; each row is loaded
//   twice, once for the dot product and once, from L1, for the update. Rows that wide would
//   spill from registers: at 24 packs the row-at-a-time loop took 3.4x a read of X in cache,
//   the blocks 1.8x.
template <class Scalar, class MemorySpace>
struct PackedGradient {
  using Pack = simd::Pack<Scalar>;
  using pack = typename Pack::type;
  static constexpr int kWidth = Pack::width;
  static constexpr int kMaxResidentPacks = 16;
  static constexpr std::int64_t kRowsPerCall = 64;
  using value_type = Scalar[];
  Kokkos::View<const Scalar**, Kokkos::LayoutRight, MemorySpace> x;
  Kokkos::View<const Scalar*, Kokkos::LayoutRight, MemorySpace> y, beta;
  unsigned value_count;  // columns + 1

  static std::int64_t calls(std::size_t n) {
    return static_cast<std::int64_t>((n + kRowsPerCall - 1) / kRowsPerCall);
  }

  void operator()(const std::int64_t call, value_type sums) const {
    const auto n = static_cast<std::int64_t>(x.extent(0));
    const std::int64_t first = call * kRowsPerCall, last = first + kRowsPerCall < n ? first + kRowsPerCall : n;
    const int packs = static_cast<int>((value_count - 1 + kWidth - 1) / kWidth);
    if (packs <= kMaxResidentPacks)
      resident(std::make_integer_sequence<int, kMaxResidentPacks>(), packs, first, last, sums);
    else
      blocks(first, last, sums);
  }

  // beta's last pack, columns [cols - width, cols), with its first width - fresh lanes (columns
  // that the pack before it holds too) zero.
  pack tail_beta(const std::int64_t cols, const int fresh) const {
    return Pack::load(beta.data() + cols - kWidth) * Pack::last_lanes(fresh);
  }

  // resident_rows<packs>, packs in [1, sizeof...(K)].
  template <int... K>
  void resident(std::integer_sequence<int, K...>, const int packs, const std::int64_t first, const std::int64_t last,
                value_type sums) const {
    (void)((packs == K + 1 && (resident_rows<K + 1>(first, last, sums), true)) || ...);
  }

  template <int K>
  void resident_rows(const std::int64_t first, const std::int64_t last, value_type sums) const {
    const std::int64_t cols = value_count - 1;
    const int fresh = static_cast<int>(cols - (K - 1) * kWidth);  // lanes of the last pack not in the one before
    pack b[K];
    for (int k = 0; k + 1 < K; ++k) b[k] = Pack::load(beta.data() + k * kWidth);
    b[K - 1] = tail_beta(cols, fresh);
    pack g[K] = {};
    Scalar squares = 0;
    for (std::int64_t i = first; i < last; ++i) {
      const Scalar* xi = &x(i, 0);
      pack xk[K];
      for (int k = 0; k + 1 < K; ++k) xk[k] = Pack::load(xi + k * kWidth);
      xk[K - 1] = Pack::load(xi + cols - kWidth);
      // Two chains of multiply-adds, so the dot product's latency is half the pack count's.
      pack even = xk[0] * b[0], odd{};
      for (int k = 1; k < K; k += 2) {
        odd += xk[k] * b[k];
        if (k + 1 < K) even += xk[k + 1] * b[k + 1];
      }
      const Scalar r = Pack::sum(even + odd) - y(i);
      squares += r * r;
      for (int k = 0; k < K; ++k) g[k] += xk[k] * r;
    }
    for (int k = 0; k + 1 < K; ++k) Pack::store(sums + k * kWidth, Pack::load(sums + k * kWidth) + g[k]);
    for (int l = kWidth - fresh; l < kWidth; ++l) sums[cols - kWidth + l] += g[K - 1][l];
    sums[cols] += squares;
  }

  // r_l = x_(i+l) . beta - y_(i+l) for the block at row i, one lane per row.
  pack residuals(const std::int64_t i, const std::int64_t cols, const pack& last_beta) const {
    const Scalar* b = beta.data();
    const Scalar* xr[kWidth];
    for (int l = 0; l < kWidth; ++l) xr[l] = &x(i + l, 0);
    pack dots[kWidth] = {};
    std::int64_t j = 0;
    for (; j + kWidth <= cols; j += kWidth) {
      const pack bj = Pack::load(b + j);
      for (int l = 0; l < kWidth; ++l) dots[l] += Pack::load(xr[l] + j) * bj;
    }
    for (int l = 0; l < kWidth; ++l) dots[l] += Pack::load(xr[l] + cols - kWidth) * last_beta;
    return Pack::transpose_sum(dots) - Pack::load(&y(i));
  }

  // sums[j] += sum_l x_(i+l),j r_l: the whole packs of columns into sums, the last pack into
  // tail_sums.
  void accumulate(const std::int64_t i, const pack& r, const std::int64_t cols, Scalar* sums, pack& tail_sums) const {
    const Scalar* xr[kWidth];
    for (int l = 0; l < kWidth; ++l) xr[l] = &x(i + l, 0);
    for (std::int64_t j = 0; j + kWidth <= cols; j += kWidth) {
      // Two chains of multiply-adds: one chain through all rows would make its latency the
      // loop's.
      pack even = Pack::load(xr[0] + j) * r[0], odd = Pack::load(xr[1] + j) * r[1];
      for (int l = 2; l < kWidth; l += 2) {
        even += Pack::load(xr[l] + j) * r[l];
        odd += Pack::load(xr[l + 1] + j) * r[l + 1];
      }
      Pack::store(sums + j, Pack::load(sums + j) + (even + odd));
    }
    for (int l = 0; l < kWidth; ++l) tail_sums += Pack::load(xr[l] + cols - kWidth) * r[l];
  }

  // Where the width divides the columns, the loops over whole packs take them all and the last
  // pack repeats them all: its beta is zero.
  void blocks(const std::int64_t first, const std::int64_t last, value_type sums) const {
    const std::int64_t cols = value_count - 1, tail = cols - kWidth;
    const int repeated = kWidth - static_cast<int>(cols % kWidth);  // leading lanes of the last pack
    const Scalar* b = beta.data();
    const pack last_beta = tail_beta(cols, kWidth - repeated);
    pack tail_sums{}, squares{};
    std::int64_t i = first;
    for (; i + kWidth <= last; i += kWidth) {
      const pack r = residuals(i, cols, last_beta);
      squares += r * r;
      accumulate(i, r, cols, sums, tail_sums);
    }
    for (; i < last; ++i) {  // the rows after the last whole block
      const Scalar* xi = &x(i, 0);
      pack dot{};
      std::int64_t j = 0;
      for (; j + kWidth <= cols; j += kWidth) dot += Pack::load(xi + j) * Pack::load(b + j);
      dot += Pack::load(xi + tail) * last_beta;
      const Scalar r = Pack::sum(dot) - y(i);
      squares[0] += r * r;
      for (j = 0; j + kWidth <= cols; j += kWidth) Pack::store(sums + j, Pack::load(sums + j) + Pack::load(xi + j) * r);
      tail_sums += Pack::load(xi + tail) * r;
    }
    for (int l = repeated; l < kWidth; ++l) sums[tail + l] += tail_sums[l];
    sums[cols] += Pack::sum(squares);
  }
};
#endif

// A loss above the lowest one seen by this fraction is growth, not rounding: float32 sums of N
// squares wobble by far less than sqrt(eps), while a diverging fit multiplies it every step.
// An absolute floor of 64 eps times the first loss keeps an exact fit (loss -> 0, where rounding
// is all that is left) from looking like growth.
template <class Scalar>
double growth_tolerance() {
  return std::sqrt(static_cast<double>(std::numeric_limits<Scalar>::epsilon()));
}

// What the host learns from the data in double: the Gram matrix A = X^T X, c = X^T y, y^T y.
struct NormalEquations {
  std::size_t cols = 0;
  std::vector<double> gram, xty;
  double yty = 0;
};

template <class XView, class YView>
NormalEquations normal_equations(const XView& x, const YView& y) {
  NormalEquations ne;
  const std::size_t n = x.extent(0), cols = x.extent(1);
  ne.cols = cols;
  ne.gram.assign(cols * cols, 0.0);
  ne.xty.assign(cols, 0.0);
  std::vector<double> row(cols);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < cols; ++j) row[j] = static_cast<double>(x(i, j));
    const double yi = static_cast<double>(y(i));
    for (std::size_t j = 0; j < cols; ++j) {
      for (std::size_t k = j; k < cols; ++k) ne.gram[j * cols + k] += row[j] * row[k];
      ne.xty[j] += row[j] * yi;
    }
    ne.yty += yi * yi;
  }
  for (std::size_t j = 0; j < cols; ++j)
    for (std::size_t k = 0; k < j; ++k) ne.gram[j * cols + k] = ne.gram[k * cols + j];
  return ne;
}

// The float64 host replay: the same gradient steps, in the Gram form
// beta <- beta - lr (2/N) (A beta - c), equal in exact arithmetic to the device's
// X^T (X beta - y) and costing cols^2 per step instead of N cols. Its losses, in the same form
// (beta.A beta - 2 beta.c + y.y) / N, only detect divergence: they cancel where y.y >> loss, so
// the first iterates are kept and their losses computed from the data.
struct Replay {
  std::vector<double> beta;
  std::vector<std::vector<double>> first_iterates;  // beta before each of the first steps
  std::int64_t diverged_at = -1;
};

// The losses the device's are checked against: that many of the first steps, where a wrong step
// size or gradient shows before the fit settles.
inline constexpr std::size_t kCheckedLosses = 16;

inline Replay replay(const NormalEquations& ne, std::size_t n, std::int64_t iterations, double lr,
                     double growth_tol, double epsilon) {
  const std::size_t cols = ne.cols;
  Replay r;
  r.beta.assign(cols, 0.0);
  std::vector<double> ab(cols);
  double best = -1, floor = 0;
  const double scale = 2.0 / static_cast<double>(n);
  for (std::int64_t k = 0; k < iterations; ++k) {
    double bab = 0, bc = 0;
    for (std::size_t j = 0; j < cols; ++j) {
      double s = 0;
      for (std::size_t l = 0; l < cols; ++l) s += ne.gram[j * cols + l] * r.beta[l];
      ab[j] = s;
      bab += r.beta[j] * s;
      bc += r.beta[j] * ne.xty[j];
    }
    const double loss = std::max(0.0, (bab - 2 * bc + ne.yty) / static_cast<double>(n));
    if (r.first_iterates.size() < kCheckedLosses) r.first_iterates.push_back(r.beta);
    if (!std::isfinite(loss) || (best >= 0 && loss > best * (1 + growth_tol) + floor)) {
      r.diverged_at = k;
      break;
    }
    if (best < 0) floor = 64 * epsilon * loss;
    if (best < 0 || loss < best) best = loss;
    for (std::size_t j = 0; j < cols; ++j) r.beta[j] -= lr * scale * (ab[j] - ne.xty[j]);
  }
  return r;
}

// Largest eigenvalue of the loss' Hessian H = (2/N) A by power iteration: gradient descent on
// this quadratic diverges for lr >= 2 / lambda_max and descends fastest near 1 / lambda_max.
inline double hessian_largest_eigenvalue(const NormalEquations& ne, std::size_t n) {
  const std::size_t cols = ne.cols;
  std::vector<double> v(cols, 1.0), w(cols);
  double lambda = 0;
  for (int it = 0; it < 200; ++it) {
    double norm = 0;
    for (std::size_t j = 0; j < cols; ++j) {
      double s = 0;
      for (std::size_t l = 0; l < cols; ++l) s += ne.gram[j * cols + l] * v[l];
      w[j] = s;
      norm += s * s;
    }
    norm = std::sqrt(norm);
    if (!(norm > 0)) return 0;
    const double next = norm;  // |A v| with |v| = 1 after the first step
    for (std::size_t j = 0; j < cols; ++j) v[j] = w[j] / norm;
    if (it > 0 && std::abs(next - lambda) <= 1e-10 * next) {
      lambda = next;
      break;
    }
    lambda = next;
  }
  return 2.0 * lambda / static_cast<double>(n);
}

// Mean squared error of coefficients b on the data, in double.
template <class XView, class YView>
double mean_squared_error(const XView& x, const YView& y, const std::vector<double>& b) {
  const std::size_t n = x.extent(0), cols = x.extent(1);
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double r = -static_cast<double>(y(i));
    for (std::size_t j = 0; j < cols; ++j) r += static_cast<double>(x(i, j)) * b[j];
    s += r * r;
  }
  return s / static_cast<double>(n);
}

// max_j |fitted_j - true_j| / se_j, se_j = sqrt(s^2 (X^T X)^-1_jj) the standard error of the
// least-squares estimate with s^2 = RSS / (N - cols): whether the fit recovered the true
// coefficients "within the noise". One LU solve per column, so only for small models.
inline std::optional<double> standard_scores(const NormalEquations& ne, std::size_t n, double closed_form_loss,
                                             const std::vector<double>& fitted, const std::vector<double>& truth) {
  const std::size_t cols = ne.cols;
  if (cols > 128 || n <= cols) return std::nullopt;
  const double s2 = closed_form_loss * static_cast<double>(n) / static_cast<double>(n - cols);
  double worst = 0;
  for (std::size_t j = 0; j < cols; ++j) {
    std::vector<double> a = ne.gram, e(cols, 0.0);
    e[j] = 1.0;
    if (host_lu_solve(a, e, cols)) return std::nullopt;
    const double se = std::sqrt(s2 * e[j]);
    if (!(se > 0)) return std::nullopt;
    worst = std::max(worst, std::abs(fitted[j] - truth[j]) / se);
  }
  return worst;
}

// Rounds a positive rate down to 3 significant digits, so "try <= x" is never above the bound.
inline double round_down_3(double v) {
  if (!(v > 0) || !std::isfinite(v)) return v;
  const double p = std::pow(10.0, std::floor(std::log10(v)) - 2);
  return std::floor(v / p) * p;
}

inline std::string format_list(const std::vector<double>& v, std::size_t max_shown = 12) {
  std::ostringstream s;
  s.precision(6);
  s << "[";
  for (std::size_t j = 0; j < v.size() && j < max_shown; ++j) s << (j ? ", " : "") << v[j];
  if (v.size() > max_shown) s << ", ... (" << v.size() << " in all)";
  s << "]";
  return s.str();
}

// How far the float steps may drift from the float64 replay, relative to max(1, |beta|_inf).
// Each step rounds every coefficient (half an ulp) and its gradient, whose sum over N rows loses
// about sqrt(N) ulps; the iteration is a contraction, so the errors add up at most linearly
// over the steps, not geometrically. The factor 4 covers the gradient's own rounding.
template <class Scalar>
double default_tolerance(std::int64_t iterations, std::size_t n) {
  const double eps = static_cast<double>(std::numeric_limits<Scalar>::epsilon());
  return 4.0 * eps * (static_cast<double>(iterations) + std::sqrt(static_cast<double>(n)));
}

template <class Scalar, class Space>
class Kernel {
  using memory_space = typename Space::memory_space;

 public:
  Kernel(const Params& p, const std::string& variant, std::size_t n)
      : params_(p),
        fused_(variant == "fused"),
        n_(n),
        cols_(p.columns()),
        x_("X", n, p.columns()),
        y_("y", n),
        beta_("beta", p.columns()),
        loss_("loss", static_cast<std::size_t>(p.iterations)),
        diverged_at_("diverged_at", 1),
        residual_("residual", fused_ ? 0 : n),
        sums_("gradient_sums", p.columns() + 1),
        best_loss_("best_loss", 2) {}

  std::vector<Transferable*> inputs() { return {&x_, &y_}; }
  std::vector<Transferable*> outputs() { return {&beta_, &loss_, &diverged_at_}; }

  void generate_inputs(std::uint64_t seed) {
    seed_ = seed;
    auto x = x_.host;
    auto y = y_.host;
    for (std::size_t i = 0; i < n_; ++i)
      y(i) = static_cast<Scalar>(generate_row(params_.single_variable(), n_, cols_, seed, params_.noise_scale(), i,
                                              RowSetter<decltype(x)>{x, i}));
  }

  void generate_inputs_on_device(const Space& space, std::uint64_t seed) {
    seed_ = seed;
    const auto x = x_.device;
    const auto y = y_.device;
    const bool single = params_.single_variable();
    const std::size_t n = n_, cols = cols_;
    const double noise = params_.noise_scale();
    using XView = std::remove_const_t<decltype(x)>;
    Kokkos::parallel_for(
        "regression::generate", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i) {
          const auto row = static_cast<std::size_t>(i);
          y(i) = static_cast<Scalar>(generate_row(single, n, cols, seed, noise, row, RowSetter<XView>{x, row}));
        });
  }

  // The whole fit, from beta = 0: `iterations` steps of two kernels each (the gradient sums, then
  // a one-thread update that also records the loss and stops updating once the loss grows or is
  // not finite). Nothing comes back to the host until the harness copies the outputs.
  void compute(const Space& space) {
    const auto beta = beta_.device;
    const auto loss = loss_.device;
    const auto diverged_at = diverged_at_.device;
    const auto sums = sums_;
    const auto best = best_loss_;
    const auto cols = static_cast<std::int64_t>(cols_);
    Kokkos::parallel_for(
        "regression::start", Kokkos::RangePolicy<Space>(space, 0, 1), KOKKOS_LAMBDA(const int) {
          for (std::int64_t j = 0; j < cols; ++j) beta(j) = Scalar(0);
          best(0) = Scalar(-1);
          best(1) = Scalar(0);
          diverged_at(0) = -1;
        });
    const Scalar inv_n = Scalar(1) / static_cast<Scalar>(n_);
    // blas: gemv already scaled the gradient by 2/N; fused: the raw sums.
    const Scalar step = static_cast<Scalar>(params_.rate()) * (fused_ ? Scalar(2) * inv_n : Scalar(1));
    const Scalar growth = static_cast<Scalar>(growth_tolerance<Scalar>());
    const Scalar epsilon = std::numeric_limits<Scalar>::epsilon();
    for (std::int64_t k = 0; k < params_.iterations; ++k) {
      if (fused_) fused_sums(space);
      else blas_sums(space);
      Kokkos::parallel_for(
          "regression::update", Kokkos::RangePolicy<Space>(space, 0, 1), KOKKOS_LAMBDA(const int) {
            const Scalar l = sums(cols) * inv_n;
            loss(k) = l;
            if (diverged_at(0) >= 0) return;
            if (!compat::math::isfinite(l) || (best(0) >= Scalar(0) && l > best(0) * (Scalar(1) + growth) + best(1))) {
              diverged_at(0) = k;
              return;
            }
            if (best(0) < Scalar(0)) best(1) = Scalar(64) * epsilon * l;
            if (best(0) < Scalar(0) || l < best(0)) best(0) = l;
            for (std::int64_t j = 0; j < cols; ++j) beta(j) -= step * sums(j);
          });
    }
  }

  WorkEstimate work() const {
    const double n = static_cast<double>(n_), c = static_cast<double>(cols_), s = sizeof(Scalar);
    const double steps = static_cast<double>(params_.iterations);
    // Per step: X beta and X^T r, 2 N cols multiply-adds each.
    const double flops = 4.0 * n * c * steps;
    if (fused_) return {flops, steps * s * (n * c + n + c), steps * s * (c + 1)};
    // r = y (copy), r = X beta - r, sum r^2, g = X^T r: X twice, r or y four times.
    return {flops, steps * s * (2 * n * c + 4 * n + c), steps * s * (2 * n + c)};
  }

  Verification verify(std::optional<double> tolerance) const {
    Verification v;
    v.checked = true;
    v.tolerance = tolerance.value_or(default_tolerance<Scalar>(params_.iterations, n_));
    v.reference = "float64 host replay of the same steps (Gram form); closed form by host LU";
    const auto x = x_.host;
    const auto y = y_.host;
    const double lr = params_.rate();
    const NormalEquations ne = normal_equations(x, y);
    const Replay rep = replay(ne, n_, params_.iterations, lr, growth_tolerance<Scalar>(),
                             static_cast<double>(std::numeric_limits<Scalar>::epsilon()));

    std::vector<double> fitted(cols_), truth(cols_);
    for (std::size_t j = 0; j < cols_; ++j) {
      fitted[j] = static_cast<double>(beta_.host(j));
      truth[j] = true_coefficient(params_.single_variable(), beta_stream(seed_), j);
    }
    const std::int64_t device_diverged = diverged_at_.host(0);
    if (device_diverged >= 0 || rep.diverged_at >= 0) {
      const double lambda = hessian_largest_eigenvalue(ne, n_);
      std::ostringstream msg;
      msg << "diverged at iteration " << (device_diverged >= 0 ? device_diverged : rep.diverged_at)
          << "; learning rate " << lr << " is too large for this data, try <= " << round_down_3(1.0 / lambda)
          << " (1/L, L = " << lambda << " the largest eigenvalue of the loss' Hessian (2/N) X^T X; rates >= 2/L diverge)";
      if (device_diverged < 0) msg << " [the float64 replay diverged; the device run did not]";
      else if (rep.diverged_at < 0) msg << " [the device run diverged; the float64 replay did not]";
      v.passed = false;
      v.max_abs_error = v.max_rel_error = INFINITY;
      v.detail = msg.str();
      return v;
    }

    // The device's steps against the replay's.
    double beta_scale = 1.0;
    for (double b : rep.beta) beta_scale = std::max(beta_scale, std::abs(b));
    std::size_t worst = 0;
    for (std::size_t j = 0; j < cols_; ++j) {
      const double err = std::abs(fitted[j] - rep.beta[j]);
      if (!(err <= v.max_abs_error)) {
        v.max_abs_error = std::isnan(err) ? INFINITY : err;
        worst = j;
      }
    }
    v.max_rel_error = v.max_abs_error / beta_scale;
    // The first losses, from the replay's iterates and the data: the Gram form's
    // (b.Ab - 2 b.c + y.y) / N cancels where y.y is much larger than the loss, to some 1e-13 of
    // it at 16 columns, more than a float64 fit's tolerance.
    const std::size_t early = rep.first_iterates.size();
    std::vector<double> early_loss(early);
    for (std::size_t k = 0; k < early; ++k) early_loss[k] = mean_squared_error(x, y, rep.first_iterates[k]);
    std::size_t bad_loss = early;
    for (std::size_t k = 0; k < early; ++k) {
      const double got = static_cast<double>(loss_.host(k)), ref = early_loss[k];
      if (!(std::abs(got - ref) <= v.tolerance * std::max(1.0, ref))) {
        bad_loss = k;
        break;
      }
    }

    std::ostringstream d;
    d.precision(6);
    bool passed = true;
    if (!(v.max_rel_error <= v.tolerance)) {
      passed = false;
      d.precision(17);
      d << "beta[" << worst << "] = " << fitted[worst] << ", replay " << rep.beta[worst] << "; ";
      d.precision(6);
    }
    if (bad_loss < early) {
      passed = false;
      d.precision(17);
      d << "loss[" << bad_loss << "] = " << static_cast<double>(loss_.host(bad_loss)) << ", replay "
        << early_loss[bad_loss] << "; ";
      d.precision(6);
    }
    v.passed = passed;

    d << params_.iterations << " steps at lr " << lr << ": fitted " << format_list(fitted);
    std::vector<double> a = ne.gram, closed = ne.xty;
    if (host_lu_solve(a, closed, cols_)) {
      d << "; closed form: X^T X is singular";
    } else {
      double gap = 0;
      for (std::size_t j = 0; j < cols_; ++j) gap = std::max(gap, std::abs(fitted[j] - closed[j]));
      const double final_loss = mean_squared_error(x, y, fitted);
      const double best_loss = mean_squared_error(x, y, closed);
      d << ", closed form " << format_list(closed) << ", true " << format_list(truth) << "; max |fitted - closed form| "
        << gap << "; final loss " << final_loss << " (closed form " << best_loss << ")";
      double closed_scale = 1.0;
      for (double b : closed) closed_scale = std::max(closed_scale, std::abs(b));
      if (gap <= 1e-3 * closed_scale)
        d << "; converged (gap below 1e-3 of max |beta|)";
      else
        d << "; not converged after " << params_.iterations
          << " steps (more steps or a larger stable learning rate close the gap)";
      double truth_gap = 0;
      for (std::size_t j = 0; j < cols_; ++j) truth_gap = std::max(truth_gap, std::abs(fitted[j] - truth[j]));
      d << "; max |fitted - true| " << truth_gap;
      if (const auto z = standard_scores(ne, n_, best_loss, fitted, truth))
        d << " (" << *z << " standard errors of the least-squares estimate)";
    }
    d << "; max |fitted - replay| " << v.max_abs_error;
    v.detail = d.str();
    return v;
  }

  // Direct access for tests.
  Field<Scalar**, Space>& x() { return x_; }
  Field<Scalar*, Space>& y() { return y_; }
  Field<Scalar*, Space>& beta() { return beta_; }
  Field<Scalar*, Space>& loss() { return loss_; }
  Field<std::int64_t*, Space>& diverged_at() { return diverged_at_; }
  void set_seed(std::uint64_t seed) { seed_ = seed; }

  // The kernel launchers are public: CUDA extended lambdas may not live in private or
  // protected member functions.
  void fused_sums(const Space& space) {
#if MINIAPP_HOST_SIMD
    if constexpr (is_host_space<Space>()) {
      if (cols_ >= static_cast<std::size_t>(simd::Pack<Scalar>::width)) {
        PackedGradient<Scalar, memory_space> f{x_.device, y_.device, beta_.device, static_cast<unsigned>(cols_ + 1)};
        Kokkos::parallel_reduce("regression::fused",
                                Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, f.calls(n_)),
                                f, sums_);
        return;
      }
    }
#endif
    FusedGradient<Scalar, memory_space> f{x_.device, y_.device, beta_.device, static_cast<unsigned>(cols_ + 1)};
    Kokkos::parallel_reduce("regression::fused",
                            Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, f.blocks(n_)), f,
                            sums_);
  }

  // X is row-major, which BLAS gemv (and Kokkos Kernels' TPL path to it) does not take: seen as
  // the column-major P+1 x N matrix X^T, the same memory is what vendor gemv reads fastest.
  // Kokkos Kernels 3.4's own kernel for a row-major "T" product took ~30x one read of X.
  void blas_sums(const Space& space) {
    const auto r = residual_;
    const Kokkos::View<const Scalar**, Kokkos::LayoutLeft, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> xt(
        x_.device.data(), cols_, n_);
    Kokkos::deep_copy(space, r, y_.device);
    KokkosBlas::gemv("T", Scalar(1), xt, beta_.device, Scalar(-1), r);
    Kokkos::parallel_reduce(
        "regression::loss", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n_),
        KOKKOS_LAMBDA(const std::int64_t i, Scalar& s) { s += r(i) * r(i); }, Kokkos::subview(sums_, cols_));
    const auto gradient = Kokkos::subview(sums_, std::make_pair(std::size_t(0), cols_));
    KokkosBlas::gemv("N", Scalar(2) / static_cast<Scalar>(n_), xt, r, Scalar(0), gradient);
  }

 private:
  Params params_;
  bool fused_;
  std::size_t n_, cols_;
  std::uint64_t seed_ = 0;
  Field<Scalar**, Space> x_;
  Field<Scalar*, Space> y_;
  Field<Scalar*, Space> beta_;
  Field<Scalar*, Space> loss_;
  Field<std::int64_t*, Space> diverged_at_;
  Kokkos::View<Scalar*, Kokkos::LayoutRight, memory_space> residual_;
  Kokkos::View<Scalar*, Kokkos::LayoutRight, memory_space> sums_;
  Kokkos::View<Scalar*, Kokkos::LayoutRight, memory_space> best_loss_;  // lowest loss, growth floor
};

struct RegressionWorkload {
  static constexpr const char* name = "regression";
  static constexpr const char* summary = "linear regression by full-batch gradient descent (seed 001, Example 2)";
  static constexpr const char* size_meaning = "number of samples N (X is N x (features + 1))";
  using Params = regression::Params;
  template <class Scalar, class Space>
  using Kernel = regression::Kernel<Scalar, Space>;

  static std::vector<VariantInfo> variants() {
    return {{"blas", "per step r = X beta - y and g = (2/N) X^T r by KokkosBlas::gemv, then the update", ""},
            {"fused", "per step one pass over X: the gradient and the loss as one array reduction", ""}};
  }

  static Footprint footprint(const Params& p, const MeasurementSpec& spec) {
    const std::size_t n = spec.size, scalar_bytes = miniapp::scalar_bytes(spec.precision);
    const std::size_t cols = p.columns();
    // X, y, the residual of `blas`, the loss history, beta and the sums.
    return {(n * cols + 2 * n + static_cast<std::size_t>(p.iterations) + 2 * cols + 3) * scalar_bytes, 0};
  }

  static std::vector<std::pair<std::string, std::string>> describe(const Params& p) {
    auto number = [](double v) {
      std::ostringstream s;
      s << v;
      return s.str();
    };
    return {{"features", std::to_string(p.features)},
            {"model", p.single_variable() ? "y = 2x + 5 + noise N(0,1), x sorted in [0,1)"
                                          : "y = X beta + noise N(0,1), integer beta in 1..9"},
            {"iterations", std::to_string(p.iterations)},
            {"learning_rate", number(p.rate())},
            {"noise", number(p.noise_scale())}};
  }

  static Params parse(MapReader& r) {
    Params p;
    if (auto f = r.integer("features", 0, 4096)) p.features = static_cast<int>(*f);
    if (auto it = r.integer("iterations", 1, 100000000)) p.iterations = *it;
    if (auto lr = r.real("learning_rate", 0.0)) p.learning_rate = *lr;
    if (r.has("noise")) {
      const YAML::Node n = r.node("noise");
      const std::optional<double> v = as_real(n);
      if (!v || !(*v >= 0) || !std::isfinite(*v))
        r.diagnostics().error(n, r.key_path("noise"),
                              "found " + describe_node(n) + ", expected a number greater than or equal to 0");
      else
        p.noise = *v;
    }
    return p;
  }
};

}  // namespace miniapp::regression
