#pragma once
// The sums over the data that the regression's reference needs, in double: the normal equations
// (X^T X, X^T y, y^T y) and the losses of given coefficients. Under MPI each rank holds only its
// rows: every sum is taken over the rank's rows and then added over the ranks by the caller's
// `sum` (nothing with one rank), so every rank checks the whole fit (reference.hpp, verify_fit).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace miniapp::regression {

// What the host learns from the data in double: the Gram matrix A = X^T X, c = X^T y, y^T y.
struct NormalEquations {
  std::size_t cols = 0;
  std::vector<double> gram, xty;
  double yty = 0;
};

// Rows summed per block of kNormalBlock, each block's sums then added to the totals with their
// rounding carried (Neumaier): a sum's rounding then grows with the block's length, not with N.
// Summed row after row, the Gram form's sums were off by about sqrt(N) ulps (N u where the terms
// are alike), and the replay carries that into every step: at 10^5 rows x 51 columns, 200 steps
// in float64, the fit was 5.2e-12 from that replay against a bound of 4.6e-13 (for the fit's own
// rounding), and 3.6e-14 from this one. As fast: 0.29 s for 10^6 x 51 either way (Xeon, AVX-512).
inline constexpr std::size_t kNormalBlock = 256;

// total += part, its rounding kept in carry (added at the end).
inline void add_carried(double& total, double& carry, const double part) {
  const double t = total + part;
  carry += std::abs(total) >= std::abs(part) ? (total - t) + part : (part - t) + total;
  total = t;
}

// Over the rows of x and y; `sum` adds the ranks' sums (see verify_fit).
template <class XView, class YView, class Sum>
NormalEquations normal_equations(const XView& x, const YView& y, const Sum& sum) {
  NormalEquations ne;
  const std::size_t n = x.extent(0), cols = x.extent(1);
  ne.cols = cols;
  // gram's upper triangle (row-major, cols x cols), then xty, then yty: one vector of sums.
  const std::size_t count = cols * cols + cols + 1;
  std::vector<double> total(count, 0.0), carry(count, 0.0), block(count);
  std::vector<double> row(cols);
  for (std::size_t i0 = 0; i0 < n; i0 += kNormalBlock) {
    std::fill(block.begin(), block.end(), 0.0);
    double* gram = block.data();
    double* xty = gram + cols * cols;
    for (std::size_t i = i0; i < std::min(n, i0 + kNormalBlock); ++i) {
      for (std::size_t j = 0; j < cols; ++j) row[j] = static_cast<double>(x(i, j));
      const double yi = static_cast<double>(y(i));
      for (std::size_t j = 0; j < cols; ++j) {
        for (std::size_t k = j; k < cols; ++k) gram[j * cols + k] += row[j] * row[k];
        xty[j] += row[j] * yi;
      }
      block[count - 1] += yi * yi;
    }
    for (std::size_t e = 0; e < count; ++e) add_carried(total[e], carry[e], block[e]);
  }
  for (std::size_t e = 0; e < count; ++e) total[e] += carry[e];
  sum(total);
  const auto gram_end = total.begin() + static_cast<std::ptrdiff_t>(cols * cols);
  ne.gram.assign(total.begin(), gram_end);
  ne.xty.assign(gram_end, total.end() - 1);
  ne.yty = total.back();
  for (std::size_t j = 0; j < cols; ++j)
    for (std::size_t k = 0; k < j; ++k) ne.gram[j * cols + k] = ne.gram[k * cols + j];
  return ne;
}

template <class XView, class YView>
NormalEquations normal_equations(const XView& x, const YView& y) {
  return normal_equations(x, y, [](std::vector<double>&) {});
}

// The mean squared error of coefficients b on the data, in double, and the mean of
// |r_i| (sum_j |x_ij b_j| + |y_i|): what rounding the residuals' dot products can do to it.
struct Loss {
  double value = 0;
  double magnitude = 0;
};

// The losses of several sets of coefficients over the rows of x and y, of `total` rows in all
// (x's own with one rank); `sum` adds the ranks' sums (see verify_fit): one call for all sets.
template <class XView, class YView, class Sum>
std::vector<Loss> losses_of(const XView& x, const YView& y, const std::vector<std::vector<double>>& coefficients,
                            std::size_t total, const Sum& sum) {
  const std::size_t n = x.extent(0), cols = x.extent(1);
  std::vector<double> sums(2 * coefficients.size(), 0.0);  // squares, magnitude of each set
  for (std::size_t c = 0; c < coefficients.size(); ++c) {
    const std::vector<double>& b = coefficients[c];
    double squares = 0, magnitude = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double r = -static_cast<double>(y(i)), terms = std::abs(static_cast<double>(y(i)));
      for (std::size_t j = 0; j < cols; ++j) {
        const double t = static_cast<double>(x(i, j)) * b[j];
        r += t;
        terms += std::abs(t);
      }
      squares += r * r;
      magnitude += std::abs(r) * terms;
    }
    sums[2 * c] = squares;
    sums[2 * c + 1] = magnitude;
  }
  sum(sums);
  std::vector<Loss> losses(coefficients.size());
  for (std::size_t c = 0; c < coefficients.size(); ++c)
    losses[c] = {sums[2 * c] / static_cast<double>(total), sums[2 * c + 1] / static_cast<double>(total)};
  return losses;
}

template <class XView, class YView>
Loss loss_of(const XView& x, const YView& y, const std::vector<double>& b) {
  return losses_of(x, y, {b}, x.extent(0), [](std::vector<double>&) {})[0];
}

template <class XView, class YView>
double mean_squared_error(const XView& x, const YView& y, const std::vector<double>& b) {
  return loss_of(x, y, b).value;
}

}  // namespace miniapp::regression
