#pragma once
// What the solutions are checked against. For every system the scaled residual
// ||Ax - b||_inf / (||A||_inf ||x||_inf n eps), in long double from the original A and b, must be
// below 10: LAPACK's acceptance test, which a backward-stable LU passes whatever the condition of
// A, so it needs no reference solution. A small residual does not tell a singular system the
// kernel failed to flag, so a host LU (core/host_lu.hpp) also factors as many systems as fit in
// kReferenceLuBudget.

#include "miniapp/core/host_lu.hpp"
#include "miniapp/core/verification.hpp"
#include "miniapp/workloads/solver/params.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace miniapp::solver {

inline constexpr double kResidualThreshold = 10.0;

// The systems held are systems first_system, first_system + 1, ... of the whole batch (one MPI
// rank's part), named so in the messages.
template <class Scalar, class A, class B, class X, class Info>
Verification verify_systems(const A& a, const B& b, const X& x, const Info& info, std::optional<double> tolerance,
                            std::size_t first_system = 0) {
  const std::size_t systems = a.extent(0), n = a.extent(1);
  const long double eps = std::numeric_limits<Scalar>::epsilon();
  const std::size_t reference_systems = reference_lu_systems(systems, n);
  ErrorTally tally(tolerance.value_or(kResidualThreshold));
  std::size_t singular = 0, inaccurate = 0;
  std::vector<double> ref_a(reference_systems > 0 ? n * n : 0), ref_b(reference_systems > 0 ? n : 0);
  for (std::size_t s = 0; s < systems; ++s) {
    if (info(s) != 0) {
      ++singular;
      tally.fail([&] {
        return "system " + std::to_string(first_system + s) + " is singular: zero pivot in column " +
               std::to_string(info(s) - 1);
      });
      continue;
    }
    long double norm_a = 0, norm_x = 0, norm_r = 0, worst_ax = 0;
    std::size_t worst_row = 0;
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
    const bool accurate = tally.record(static_cast<double>(norm_r), scaled, tally.tolerance(), [&] {
      return "system " + std::to_string(first_system + s) + ": scaled residual " + full_precision(scaled) + ", largest in row " +
             std::to_string(worst_row) + ": (Ax)[" + std::to_string(worst_row) +
             "] = " + full_precision(static_cast<double>(worst_ax)) + ", b[" + std::to_string(worst_row) +
             "] = " + full_precision(b(s, worst_row));
    });
    if (!accurate) {
      ++inaccurate;
      continue;
    }
    if (s < reference_systems) {
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) ref_a[i * n + j] = static_cast<double>(a(s, i, j));
        ref_b[i] = static_cast<double>(b(s, i));
      }
      if (const auto column = host_lu_solve(ref_a, ref_b, n)) {
        ++singular;
        tally.fail([&] {
          return "system " + std::to_string(first_system + s) + " is singular (host reference LU: zero pivot in column " +
                 std::to_string(*column) + ") but the kernel reported no zero pivot";
        });
      }
    }
  }
  std::ostringstream checked;
  checked << systems << " systems of order " << n << " checked; max scaled residual " << tally.max_rel_error()
          << " (threshold " << tally.tolerance() << ")";
  if (singular > 0) checked << "; " << singular << " singular";
  if (inaccurate > 0) checked << "; " << inaccurate << " above the threshold";
  if (!tally.passed()) checked << "; first: " << tally.first_failure();
  Verification v = tally.result("scaled residual ||Ax-b||/(||A|| ||x|| n eps) in long double from the original A and b; "
                                "host LU on " + std::to_string(reference_systems) + " of " + std::to_string(systems) +
                                    " systems",
                                "");
  v.detail = checked.str();
  return v;
}

}  // namespace miniapp::solver
