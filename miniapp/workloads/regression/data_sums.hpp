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

// Over the rows of x and y; `sum` adds the ranks' sums (see verify_fit).
template <class XView, class YView, class Sum>
NormalEquations normal_equations(const XView& x, const YView& y, const Sum& sum) {
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
  std::vector<double> all = ne.gram;
  all.insert(all.end(), ne.xty.begin(), ne.xty.end());
  all.push_back(ne.yty);
  sum(all);
  std::copy(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(cols * cols), ne.gram.begin());
  std::copy(all.begin() + static_cast<std::ptrdiff_t>(cols * cols), all.end() - 1, ne.xty.begin());
  ne.yty = all.back();
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
