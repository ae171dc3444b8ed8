#pragma once
// What the distance results are checked against: plain host loops in long double over the
// generated points, on every row up to N = 2048 and an even spread of rows beyond; for a matrix
// also its structure (zero diagonal, symmetry, the triangle inequality), for row-min that the
// index is another point at the reported distance.

#include "miniapp/core/random.hpp"
#include "miniapp/core/sampling.hpp"
#include "miniapp/core/verification.hpp"
#include "miniapp/workloads/distance/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace miniapp::distance {

inline constexpr std::size_t kMaxReferenceRows = 2048;
inline constexpr std::size_t kSampledRows = 256;
inline constexpr std::size_t kTriangleTriples = 4096;

inline std::vector<std::size_t> reference_rows(std::size_t n) {
  return even_sample(n, n <= kMaxReferenceRows ? n : kSampledRows);
}

template <class PointsView>
long double reference_distance(const PointsView& points, std::size_t i, std::size_t j, int dim, bool squared) {
  long double s = 0;
  for (int k = 0; k < dim; ++k) {
    const long double d = static_cast<long double>(points(i, k)) - static_cast<long double>(points(j, k));
    s += d * d;
  }
  return squared ? s : std::sqrt(s);
}

// Rounding of the direct kernels relative to the distance: D subtractions, squares and sums, and
// the square root, each within one unit of the precision's epsilon.
template <class Scalar>
double default_tolerance(int dim) {
  return 4.0 * (dim + 3) * static_cast<double>(std::numeric_limits<Scalar>::epsilon());
}

// The bound on one entry's error. Errors are relative to max(distance, typical distance), so
// entries near zero (the diagonal) are held to an absolute bound instead of an impossible
// relative one. The gemm form x2 + y2 - 2 x.y rounds quantities of the size of the two points'
// norms, so its squared distance is off by up to 4 (D + 3) eps (|x| + |y|)^2 for this very pair
// whatever the distance (the cancellation); the root turns that into at most
// min(sqrt(e), e / d) in the distance. A user tolerance replaces both.
template <class Scalar, class Points>
class EntryBound {
 public:
  EntryBound(const Params& p, bool gemm, const Points& points, std::optional<double> tolerance)
      : squared_(p.squared),
        gemm_(gemm && !tolerance),
        base_(tolerance.value_or(default_tolerance<Scalar>(p.dim))),
        cancellation_(4.0 * (p.dim + 3) * static_cast<double>(std::numeric_limits<Scalar>::epsilon())),
        scale_(p.squared ? p.dim / 6.0 : std::sqrt(p.dim / 6.0)),
        norms_(gemm_ ? points.extent(0) : 0) {
    for (std::size_t i = 0; i < norms_.size(); ++i) {
      double s = 0;
      for (int k = 0; k < p.dim; ++k) s += static_cast<double>(points(i, k)) * static_cast<double>(points(i, k));
      norms_[i] = std::sqrt(s);
    }
  }

  // The typical distance (points uniform in the unit cube): the scale errors are relative to.
  double scale() const { return scale_; }
  double scale(double reference) const { return std::max(reference, scale_); }

  // The tolerance on the error relative to scale(reference) for entry (i, j).
  double relative(std::size_t i, std::size_t j, double reference) const {
    return base_ + gemm_extra(i, j, reference) / scale(reference);
  }
  double absolute(std::size_t i, std::size_t j, double reference) const {
    return base_ * scale(reference) + gemm_extra(i, j, reference);
  }
  // What an entry's error can do to the plain (rooted) distance, for the triangle inequality.
  double plain(std::size_t i, std::size_t j, double reference) const {
    const double e = absolute(i, j, reference);
    return squared_ ? std::sqrt(e) : e;
  }

 private:
  double gemm_extra(std::size_t i, std::size_t j, double reference) const {
    if (!gemm_) return 0;
    const double norms = norms_[i] + norms_[j];
    const double e = cancellation_ * norms * norms;
    if (squared_) return e;
    return reference > 0 ? std::min(std::sqrt(e), e / reference) : std::sqrt(e);
  }

  bool squared_, gemm_;
  double base_, cancellation_, scale_;
  std::vector<double> norms_;
};

inline std::string entry_name(std::size_t i, std::size_t j) {
  return "D(" + std::to_string(i) + "," + std::to_string(j) + ")";
}

// The matrix `out` holds rows [row0, row0 + out.extent(0)) of the n x n matrix (all of it, or one
// MPI rank's rows), row i in out(i - row0, .). Its structure is checked where those rows suffice:
// the diagonal of every row held, symmetry between the rows held, and triangles whose first two
// corners are rows held.
template <class Scalar, class Points, class Matrix>
Verification verify_matrix(const Params& p, Variant variant, const Points& points, const Matrix& out,
                           std::optional<double> tolerance, const std::string& layout_note, std::size_t row0 = 0) {
  const std::size_t n = points.extent(0), held = out.extent(0);
  const auto D = [&](std::size_t i, std::size_t j) { return out(i - row0, j); };
  const bool gemm = variant == Variant::Gemm;
  const EntryBound<Scalar, Points> bound(p, gemm, points, tolerance);
  ErrorTally entries(bound.relative(0, 0, bound.scale()));
  std::vector<std::size_t> rows = reference_rows(held);
  for (std::size_t& i : rows) i += row0;
  double worst_true_rel = 0;  // against the distance itself: what near-identical points lose
  double largest_tolerance = entries.tolerance();
  for (std::size_t i : rows) {
    for (std::size_t j = 0; j < n; ++j) {
      const auto ref = static_cast<double>(reference_distance(points, i, j, p.dim, p.squared));
      const double got = D(i, j);
      const double tol = bound.relative(i, j, ref);
      largest_tolerance = std::max(largest_tolerance, tol);
      entries.compare(got, ref, bound.scale(ref), tol, [&] { return entry_name(i, j); });
      if (i != j && ref > 0) worst_true_rel = std::max(worst_true_rel, std::abs(got - ref) / ref);
    }
  }
  // The structure of a distance matrix, checked on the output alone.
  ErrorTally structure(0);
  for (std::size_t i = row0; i < row0 + held; ++i)
    if (!(std::abs(static_cast<double>(D(i, i))) <= bound.absolute(i, i, 0)))
      structure.fail([&] { return "diagonal " + entry_name(i, i) + " = " + full_precision(D(i, i)) + ", expected 0"; });
  for (std::size_t i : rows)
    for (std::size_t j = row0; j < row0 + held; ++j) {
      const double a = D(i, j), b = D(j, i);
      if (!(std::abs(a - b) <= bound.absolute(i, j, std::abs(a)) + bound.absolute(j, i, std::abs(b))))
        structure.fail([&] {
          return "asymmetric " + entry_name(i, j) + " = " + full_precision(a) + ", D(j,i) = " + full_precision(b);
        });
    }
  const std::size_t triples = n >= 3 ? kTriangleTriples : 0;
  auto plain = [&](std::size_t i, std::size_t j) {
    const double d = D(i, j);
    return p.squared ? std::sqrt(std::max(d, 0.0)) : d;
  };
  auto slack = [&](std::size_t i, std::size_t j) { return bound.plain(i, j, std::abs(static_cast<double>(D(i, j)))); };
  for (std::size_t t = 0; t < (held > 0 ? triples : 0); ++t) {
    const std::size_t i = row0 + splitmix64(3 * t) % held, j = row0 + splitmix64(3 * t + 1) % held;
    const std::size_t k = splitmix64(3 * t + 2) % n;
    if (!(plain(i, k) <= plain(i, j) + plain(j, k) + slack(i, k) + slack(i, j) + slack(j, k)))
      structure.fail([&] {
        return "triangle inequality fails: " + entry_name(i, k) + " > " + entry_name(i, j) + " + " + entry_name(j, k);
      });
  }
  const std::string which = held == n ? std::to_string(n) + " rows"
                                       : std::to_string(held) + " rows (" + std::to_string(row0) + ".." +
                                             std::to_string(row0 + held - 1) + " of " + std::to_string(n) + ")";
  Verification v = entries.result("host long-double loops", std::to_string(rows.size()) + " of " + which +
                                                                " checked; zero diagonal, symmetry, triangle "
                                                                "inequality on " +
                                                                std::to_string(triples) + " triples");
  v.passed = entries.passed() && structure.passed();
  v.tolerance = largest_tolerance;
  std::ostringstream detail;
  detail.precision(3);
  detail << structure.failure_summary("structural failures") << "; worst error relative to the distance itself "
         << worst_true_rel;
  if (gemm && !tolerance)
    detail << " (gemm: tolerance " << entries.tolerance() << " plus each pair's cancellation bound "
           << "4 (D + 3) eps (|x| + |y|)^2 in the squared distance, at most " << largest_tolerance << ")";
  v.detail += detail.str() + layout_note;
  return v;
}

// Row-min against the nearest other point of the reference (and the index against its own
// distance); row-sum against the reference sum, which in double adds at most N roundings of the
// sum to the entries' own. The outputs hold rows [row0, row0 + rows) (one rank's part), row i in
// element i - row0.
template <class Scalar, class Points, class Nearest, class Index, class Sums>
Verification verify_rows(const Params& p, const Points& points, const Nearest& nearest, const Index& nearest_index,
                         const Sums& row_sums, std::optional<double> tolerance, std::size_t row0 = 0) {
  const std::size_t n = points.extent(0);
  const bool row_min = p.output == Output::RowMin;
  const std::size_t own_rows = row_min ? nearest.extent(0) : row_sums.extent(0);
  const double accumulation = row_min ? 0.0 : static_cast<double>(n) * std::numeric_limits<double>::epsilon();
  ErrorTally tally(tolerance.value_or(default_tolerance<Scalar>(p.dim) + accumulation));
  const EntryBound<Scalar, Points> bound(p, false, points, tolerance);
  std::vector<std::size_t> rows = reference_rows(own_rows);
  for (std::size_t& i : rows) i += row0;
  for (std::size_t i : rows) {
    long double best = INFINITY, sum = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const long double d = reference_distance(points, i, j, p.dim, p.squared);
      sum += d;
      if (j != i) best = std::min(best, d);
    }
    const std::string row = std::to_string(i);
    auto check = [&](double got, long double ref, const std::string& what) {
      tally.compare(got, static_cast<double>(ref), bound.scale(static_cast<double>(ref)), [&] { return what; });
    };
    if (!row_min) {
      check(row_sums(i - row0), sum, "row sum(" + row + ")");
      continue;
    }
    const std::int64_t index = nearest_index(i - row0);
    if (n == 1) {
      if (index != -1)
        tally.fail([&] { return "nearest index(0) = " + std::to_string(index) + ", expected -1 (no other point)"; });
      continue;
    }
    check(nearest(i - row0), best, "nearest distance(" + row + ")");
    if (index < 0 || static_cast<std::size_t>(index) >= n || static_cast<std::size_t>(index) == i)
      tally.fail([&] { return "nearest index(" + row + ") = " + std::to_string(index) + " is not another point"; });
    else
      check(static_cast<double>(reference_distance(points, i, static_cast<std::size_t>(index), p.dim, p.squared)), best,
            "distance to nearest index(" + row + ") = " + std::to_string(index));
  }
  const std::string part =
      own_rows == n ? "" : " of rows " + std::to_string(row0) + " to " + std::to_string(row0 + own_rows - 1);
  return tally.result("host long-double loops over all j", std::to_string(rows.size()) + " of " + std::to_string(n) +
                                                               " rows checked" + part + " (" + to_string(p.output) + ")");
}

}  // namespace miniapp::distance
