#pragma once
// Dense LU with partial pivoting on the host, in double: the reference the solver checks its
// kernels' pivots against, and the regression's closed-form least-squares solution.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace miniapp {

// Solves A x = b in place: `a` (n x n, row-major) becomes its LU factors, `b` becomes x.
// Returns the column of the first zero pivot when A is singular to working precision
// (its largest remaining entry at most n * eps * max|A|), else nothing.
inline std::optional<std::size_t> host_lu_solve(std::vector<double>& a, std::vector<double>& b, std::size_t n) {
  double scale = 0;
  for (double v : a) scale = std::max(scale, std::abs(v));
  const double tiny = static_cast<double>(n) * 2.220446049250313e-16 * scale;
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t p = k;
    for (std::size_t i = k + 1; i < n; ++i)
      if (std::abs(a[i * n + k]) > std::abs(a[p * n + k])) p = i;
    if (!(std::abs(a[p * n + k]) > tiny)) return k;
    if (p != k) {
      for (std::size_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
      std::swap(b[k], b[p]);
    }
    const double pivot = a[k * n + k];
    for (std::size_t i = k + 1; i < n; ++i) {
      const double l = a[i * n + k] / pivot;
      a[i * n + k] = l;
      for (std::size_t j = k + 1; j < n; ++j) a[i * n + j] -= l * a[k * n + j];
      b[i] -= l * b[k];
    }
  }
  for (std::size_t k = n; k-- > 0;) {
    double s = b[k];
    for (std::size_t j = k + 1; j < n; ++j) s -= a[k * n + j] * b[j];
    b[k] = s / a[k * n + k];
  }
  return std::nullopt;
}

}  // namespace miniapp
