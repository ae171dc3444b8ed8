#pragma once
// What a fit is checked against: a float64 host replay of the same steps from the same data, in
// the Gram form (equal in exact arithmetic and N times cheaper); the closed form by host LU and the
// true coefficients only for the detail (a fit that has not converged is not wrong). The bounds
// are derived per case, from the rounding of the case's own sums and the condition of its X^T X:
// see coefficient_tolerance and loss_bound.
// Split across MPI ranks, the sums over the data are added over the ranks (data_sums.hpp).

#include "miniapp/core/host_lu.hpp"
#include "miniapp/core/verification.hpp"
#include "miniapp/workloads/regression/data_sums.hpp"
#include "miniapp/workloads/regression/kernels.hpp"
#include "miniapp/workloads/regression/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace miniapp::regression {

// A loss above the lowest one seen by this fraction is growth, not rounding: float32 sums of N
// squares wobble by far less than sqrt(eps), while a diverging fit multiplies it every step.
// An absolute floor of 64 eps times the first loss keeps an exact fit (loss -> 0, where rounding
// is all that is left) from looking like growth.
template <class Scalar>
double growth_tolerance() {
  return std::sqrt(static_cast<double>(std::numeric_limits<Scalar>::epsilon()));
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

// Every eigenvalue of a symmetric n x n matrix (row-major) by cyclic Jacobi rotations, which
// keep the small ones accurate: for small models only (n^3 per sweep).
inline std::vector<double> symmetric_eigenvalues(std::vector<double> a, std::size_t n) {
  for (int sweep = 0; sweep < 64; ++sweep) {
    double off = 0, diagonal = 0;
    for (std::size_t p = 0; p < n; ++p) {
      diagonal += a[p * n + p] * a[p * n + p];
      for (std::size_t q = p + 1; q < n; ++q) off += a[p * n + q] * a[p * n + q];
    }
    if (!(off > 1e-32 * diagonal)) break;
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t q = p + 1; q < n; ++q) {
        const double apq = a[p * n + q];
        if (apq == 0) continue;
        const double theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (std::size_t r = 0; r < n; ++r) {  // columns p and q
          const double arp = a[r * n + p], arq = a[r * n + q];
          a[r * n + p] = c * arp - s * arq;
          a[r * n + q] = s * arp + c * arq;
        }
        for (std::size_t r = 0; r < n; ++r) {  // rows p and q
          const double apr = a[p * n + r], aqr = a[q * n + r];
          a[p * n + r] = c * apr - s * aqr;
          a[q * n + r] = s * apr + c * aqr;
        }
      }
  }
  std::vector<double> values(n);
  for (std::size_t p = 0; p < n; ++p) values[p] = a[p * n + p];
  return values;
}

// Models up to this many columns have their Hessian's spectrum computed (Jacobi, cols^3 per sweep).
inline constexpr std::size_t kSpectrumColumns = 128;

// How many steps' rounding a coefficient can still carry at the end of the fit. Step k's error
// is multiplied by I - lr H at every later step, whose norm is rho = max |1 - lr mu| over the
// eigenvalues mu of the Hessian H = (2/N) X^T X; so the errors of all K steps add up to at most
// sum_m rho^m = (1 - rho^K) / (1 - rho), far fewer than K once the fit converges. K where the
// spectrum is not computed or the rate is not stable.
inline double accumulated_steps(const NormalEquations& ne, std::size_t n, std::int64_t iterations, double lr) {
  const auto steps = static_cast<double>(iterations);
  if (ne.cols > kSpectrumColumns) return steps;
  const std::vector<double> lambda = symmetric_eigenvalues(ne.gram, ne.cols);
  const auto [low, high] = std::minmax_element(lambda.begin(), lambda.end());
  const double scale = 2.0 / static_cast<double>(n);
  const double rho = std::max(std::abs(1 - lr * scale * *low), std::abs(1 - lr * scale * *high));
  if (!(rho < 1)) return steps;
  return std::min(steps, (1 - std::pow(rho, steps)) / (1 - rho));
}

// How far the float steps may drift from the float64 replay, relative to max(1, |beta|_inf).
// Each step rounds every coefficient (half an ulp) and its gradient, whose sum over N rows loses
// about sqrt(N) ulps; a step's error lives on through accumulated_steps later steps. The factor
// 4 covers the gradient's own rounding.
template <class Scalar>
double coefficient_tolerance(double accumulated, std::size_t n) {
  const double eps = static_cast<double>(std::numeric_limits<Scalar>::epsilon());
  return 4.0 * eps * (accumulated + std::sqrt(static_cast<double>(n)));
}

// The bound on |device loss_k - reference loss_k| for one of the first steps. The loss is
// (1/N) sum r_i^2 with r_i = x_i.beta - y_i a dot product of cols + 1 terms: each residual is
// off by (cols + 2) u of its terms' magnitudes, which moves the loss by 2 (cols + 2) u mean
// |r_i| (sum_j |x_ij beta_j| + |y_i|), growing with the row length; the sum of N squares adds
// N u of the loss (positive terms, any order). Both the device (its u) and the double reference
// round so. The device's iterate is also not the replay's: after k steps it has drifted by up to
// coefficient_tolerance(k) of max(1, |beta|) per coefficient, which moves the loss by at most
// 2 sqrt(loss L) |d| + L |d|^2 with L the largest eigenvalue of X^T X / N. Nothing about the
// number of steps of the whole fit: a kernel that drops rows or scales the gradient wrongly
// shows here at full size.
template <class Scalar>
double loss_bound(const Loss& loss, std::size_t n, std::size_t cols, std::int64_t k, double largest_eigenvalue,
                  double beta_scale) {
  auto rounding = [&](double u) {
    return u * (2.0 * (cols + 2) * loss.magnitude + (static_cast<double>(n) + 2) * loss.value);
  };
  const double u = static_cast<double>(std::numeric_limits<Scalar>::epsilon()) / 2;
  const double u64 = std::numeric_limits<double>::epsilon() / 2;
  const double drift =
      k == 0 ? 0.0 : coefficient_tolerance<Scalar>(static_cast<double>(k), n) * beta_scale * std::sqrt(double(cols));
  const double moved = 2 * std::sqrt(loss.value * largest_eigenvalue) * drift + largest_eigenvalue * drift * drift;
  return rounding(u) + rounding(u64) + moved;
}

// The fitted coefficients against the least-squares solution (by host LU of X^T X) and the true
// ones, appended to `d`: the gaps, the final losses, whether the fit converged, and how many
// standard errors of the estimate the fit lies from the truth.
template <class X, class Y, class Sum>
void describe_closed_form(std::ostringstream& d, const X& x, const Y& y, const NormalEquations& ne,
                          const std::vector<double>& fitted, const std::vector<double>& truth,
                          const std::int64_t iterations, std::size_t n, const Sum& sum) {
  const std::size_t cols = x.extent(1);
  std::vector<double> a = ne.gram, closed = ne.xty;
  if (host_lu_solve(a, closed, cols)) {
    d << "; closed form: X^T X is singular";
  } else {
    double gap = 0, truth_gap = 0, closed_scale = 1.0;
    for (std::size_t j = 0; j < cols; ++j) {
      gap = std::max(gap, std::abs(fitted[j] - closed[j]));
      truth_gap = std::max(truth_gap, std::abs(fitted[j] - truth[j]));
      closed_scale = std::max(closed_scale, std::abs(closed[j]));
    }
    const std::vector<Loss> final_losses = losses_of(x, y, {closed, fitted}, n, sum);
    const double best_loss = final_losses[0].value;
    d << ", closed form " << format_list(closed) << ", true " << format_list(truth) << "; max |fitted - closed form| "
      << gap << "; final loss " << final_losses[1].value << " (closed form " << best_loss << ")";
    if (gap <= 1e-3 * closed_scale)
      d << "; converged (gap below 1e-3 of max |beta|)";
    else
      d << "; not converged after " << iterations
        << " steps (more steps or a larger stable learning rate close the gap)";
    d << "; max |fitted - true| " << truth_gap;
    if (const auto z = standard_scores(ne, n, best_loss, fitted, truth))
      d << " (" << *z << " standard errors of the least-squares estimate)";
  }
}

// The whole check of one fit. `device_diverged`: the step where the device stopped updating, or -1.
// Under MPI, x and y are this rank's rows of a problem of `total` rows, and `sum(values)` adds a
// vector of sums over every rank's rows in place; every rank calls it the same times in the same
// order (each decision between the calls depends on summed values only). One rank: total is x's
// extent (0 says so too) and sum does nothing.
template <class Scalar, class X, class Y, class Beta, class LossView, class Sum>
Verification verify_fit(const Params& p, std::uint64_t seed, const X& x, const Y& y, const Beta& beta,
                        const LossView& loss, std::int64_t device_diverged, std::optional<double> tolerance,
                        std::size_t total, const Sum& sum) {
  const std::size_t n = total ? total : x.extent(0), cols = x.extent(1);
  const double lr = p.rate();
  const NormalEquations ne = normal_equations(x, y, sum);
  const Replay rep = replay(ne, n, p.iterations, lr, growth_tolerance<Scalar>(),
                            static_cast<double>(std::numeric_limits<Scalar>::epsilon()));
  std::vector<double> fitted(cols), truth(cols);
  for (std::size_t j = 0; j < cols; ++j) {
    fitted[j] = static_cast<double>(beta(j));
    truth[j] = true_coefficient(p.single_variable(), beta_stream(seed), j);
  }
  const double hessian_max = hessian_largest_eigenvalue(ne, n);
  if (device_diverged >= 0 || rep.diverged_at >= 0) {
    Verification v;
    v.checked = true;
    v.reference = "float64 host replay of the same steps (Gram form)";
    std::ostringstream msg;
    msg << "diverged at iteration " << (device_diverged >= 0 ? device_diverged : rep.diverged_at) << "; learning rate "
        << lr << " is too large for this data, try <= " << round_down_3(1.0 / hessian_max) << " (1/L, L = "
        << hessian_max << " the largest eigenvalue of the loss' Hessian (2/N) X^T X; rates >= 2/L diverge)";
    if (device_diverged < 0) msg << " [the float64 replay diverged; the device run did not]";
    else if (rep.diverged_at < 0) msg << " [the device run diverged; the float64 replay did not]";
    v.max_abs_error = v.max_rel_error = INFINITY;
    v.detail = msg.str();
    return v;
  }

  // The device's steps against the replay's.
  double beta_scale = 1.0;
  for (double b : rep.beta) beta_scale = std::max(beta_scale, std::abs(b));
  const double accumulated = accumulated_steps(ne, n, p.iterations, lr);
  ErrorTally coefficients(tolerance.value_or(coefficient_tolerance<Scalar>(accumulated, n)));
  for (std::size_t j = 0; j < cols; ++j)
    coefficients.compare(fitted[j], rep.beta[j], beta_scale, [&] { return "beta[" + std::to_string(j) + "]"; });
  // The first losses, from the replay's iterates and the data: the Gram form's
  // (b.Ab - 2 b.c + y.y) / N cancels where y.y is much larger than the loss.
  ErrorTally losses(tolerance.value_or(1.0));
  const std::vector<Loss> first_losses = losses_of(x, y, rep.first_iterates, n, sum);
  for (std::size_t k = 0; k < rep.first_iterates.size(); ++k) {
    const Loss& reference = first_losses[k];
    double iterate_scale = 1.0;
    for (double b : rep.first_iterates[k]) iterate_scale = std::max(iterate_scale, std::abs(b));
    const double scale = std::max(1.0, reference.value);
    const double bound = tolerance ? *tolerance
                                   : loss_bound<Scalar>(reference, n, cols, static_cast<std::int64_t>(k),
                                                        hessian_max / 2, iterate_scale) / scale;
    losses.compare(static_cast<double>(loss(k)), reference.value, scale, bound,
                   [&] { return "loss[" + std::to_string(k) + "]"; });
  }

  std::ostringstream d;
  d.precision(6);
  d << p.iterations << " steps at lr " << lr << ": fitted " << format_list(fitted);
  describe_closed_form(d, x, y, ne, fitted, truth, p.iterations, n, sum);
  d << "; max |fitted - replay| " << coefficients.max_abs_error() << " (tolerance " << coefficients.tolerance()
    << " of max(1, |beta|): rounding of " << accumulated << " steps carried to the end)";
  Verification v = coefficients.result("float64 host replay of the same steps (Gram form); closed form by host LU", d.str());
  v.detail += losses.failure_summary("of the first losses off the replay");
  v.passed = coefficients.passed() && losses.passed();
  return v;
}

// The check of a fit on the whole problem in x and y (one rank).
template <class Scalar, class X, class Y, class Beta, class LossView>
Verification verify_fit(const Params& p, std::uint64_t seed, const X& x, const Y& y, const Beta& beta,
                        const LossView& loss, std::int64_t device_diverged, std::optional<double> tolerance) {
  return verify_fit<Scalar>(p, seed, x, y, beta, loss, device_diverged, tolerance, x.extent(0),
                            [](std::vector<double>&) {});
}

}  // namespace miniapp::regression
