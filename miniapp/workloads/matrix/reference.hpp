#pragma once
// What the matrix results are checked against, and why the bounds are what they are.

#include "miniapp/core/sampling.hpp"
#include "miniapp/core/verification.hpp"
#include "miniapp/workloads/matrix/params.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace miniapp::matrix {

// Elements checked against the reference: all up to this many, an even spread beyond.
inline constexpr std::size_t kMaxCheckedElements = std::size_t(1) << 24;
inline constexpr std::size_t kSampledElements = std::size_t(1) << 20;
// GEMM rows checked: all while rows * N * K stays under this many multiply-adds, else an even
// spread of rows (at least kMinSampledRows) that does.
inline constexpr double kReferenceMultiplyAdds = 1 << 27;
inline constexpr std::size_t kMinSampledRows = 16;

inline std::vector<std::size_t> gemm_reference_rows(const GemmShape& s) {
  const double per_row = static_cast<double>(s.n) * static_cast<double>(s.k);
  const auto affordable = static_cast<std::size_t>(kReferenceMultiplyAdds / std::max(per_row, 1.0));
  return even_sample(s.m, std::max(affordable, kMinSampledRows));
}

// z against std::pow / the product of the same inputs in double: pow rounds within a few units
// in the last place of the precision, a multiply within one, relative to the value itself.
template <class Scalar, class HostMatrix>
Verification verify_elementwise(Operation op, const HostMatrix& x, const HostMatrix& y, const HostMatrix& z,
                                std::optional<double> tolerance) {
  const double eps = std::numeric_limits<Scalar>::epsilon();
  ErrorTally tally(tolerance.value_or((op == Operation::Power ? 8.0 : 1.0) * eps));
  const std::size_t total = z.span(), cols = z.extent(1);
  const std::vector<std::size_t> picked = even_sample(total, total <= kMaxCheckedElements ? total : kSampledElements);
  for (std::size_t e : picked) {
    const double xe = x.data()[e], ye = y.data()[e];
    const double reference = op == Operation::Power ? std::pow(xe, ye) : xe * ye;
    tally.compare(z.data()[e], reference, std::abs(reference),
                  [&] { return "z(" + std::to_string(e / cols) + "," + std::to_string(e % cols) + ")"; });
  }
  return tally.result(op == Operation::Power ? "host std::pow in double" : "host multiplication in double",
                      std::to_string(picked.size()) + " of " + std::to_string(total) + " elements checked");
}

// C against host loops in double on the rows gemm_reference_rows picks. The bound is the
// standard one of a K-term dot product: K units of roundoff of the sum of magnitudes (plus the
// alpha/beta scaling), relative to that sum, so cancellation cannot fail it. Under MPI, A, C0 and
// C are one rank's panel of rows, which begins at row `first_row` of the whole product (errors
// name the whole product's rows).
template <class Scalar, class HostMatrix>
Verification verify_gemm(const Params& p, const GemmShape& shape, const HostMatrix& A, const HostMatrix& B,
                         const HostMatrix& C0, const HostMatrix& C, std::optional<double> tolerance,
                         std::size_t first_row = 0) {
  const std::size_t N = shape.n, K = shape.k;
  ErrorTally tally(tolerance.value_or((K + 3.0) * std::numeric_limits<Scalar>::epsilon()));
  const bool reads_c0 = p.beta != 0.0;
  const std::vector<std::size_t> rows = gemm_reference_rows(shape);
  std::vector<double> sum(N), magnitude(N);
  for (std::size_t i : rows) {
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(magnitude.begin(), magnitude.end(), 0.0);
    for (std::size_t k = 0; k < K; ++k) {
      const double aik = A(i, k);
      for (std::size_t j = 0; j < N; ++j) {
        sum[j] += aik * static_cast<double>(B(k, j));
        magnitude[j] += std::abs(aik * static_cast<double>(B(k, j)));
      }
    }
    for (std::size_t j = 0; j < N; ++j) {
      const double c0 = reads_c0 ? static_cast<double>(C0(i, j)) : 0.0;
      const double scale = std::abs(p.alpha) * magnitude[j] + std::abs(p.beta * c0);
      tally.compare(C(i, j), p.alpha * sum[j] + p.beta * c0, scale,
                    [&] { return "C(" + std::to_string(first_row + i) + "," + std::to_string(j) + ")"; });
    }
  }
  return tally.result("host loops with double accumulation",
                      std::to_string(rows.size()) + " of " + std::to_string(shape.m) +
                          " rows checked, error relative to sum |alpha a b| + |beta c0|");
}

}  // namespace miniapp::matrix
