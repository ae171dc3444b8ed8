#pragma once
// Euclidean distance matrix of N random points in D dimensions (seed 002, ETH Zurich):
// D(i, j) = || p_i - p_j ||, or its square.

#include "miniapp/core/field.hpp"
#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/random.hpp"
#include "miniapp/core/workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace miniapp::distance {

struct Params {
  int dim = 3;
  bool squared = false;
};

// Rows checked against the reference: all of them up to this N, an even spread beyond.
inline constexpr std::size_t kMaxReferenceRows = 2048;
inline constexpr std::size_t kSampledRows = 256;

// The independent reference: plain host loops in long double over the generated points.
template <class PointsView>
long double reference_distance(const PointsView& points, std::size_t i, std::size_t j, int dim, bool squared) {
  long double s = 0;
  for (int k = 0; k < dim; ++k) {
    const long double d = static_cast<long double>(points(i, k)) - static_cast<long double>(points(j, k));
    s += d * d;
  }
  return squared ? s : std::sqrt(s);
}

inline std::vector<std::size_t> reference_rows(std::size_t n) {
  std::vector<std::size_t> rows;
  if (n <= kMaxReferenceRows) {
    for (std::size_t i = 0; i < n; ++i) rows.push_back(i);
  } else {
    for (std::size_t k = 0; k < kSampledRows; ++k) rows.push_back(k * (n - 1) / (kSampledRows - 1));
  }
  return rows;
}

// Rounding bound of the kernel relative to the distance: D subtractions, squares and sums,
// and the square root, each within one unit of the precision's epsilon.
template <class Scalar>
double default_tolerance(int dim) {
  return 4.0 * (dim + 3) * static_cast<double>(std::numeric_limits<Scalar>::epsilon());
}

template <class Scalar, class Space>
class Kernel {
 public:
  Kernel(const Params& p, const std::string& variant, std::size_t n)
      : params_(p), variant_(variant), n_(n), points_("points", n, p.dim), distances_("distances", n, n) {}

  std::vector<Transferable*> inputs() { return {&points_}; }
  std::vector<Transferable*> outputs() { return {&distances_}; }

  void generate_inputs(std::uint64_t seed) {
    auto host = points_.host;
    const std::size_t dim = static_cast<std::size_t>(params_.dim);
    for (std::size_t i = 0; i < n_; ++i)
      for (std::size_t k = 0; k < dim; ++k) host(i, k) = static_cast<Scalar>(uniform01(seed, i * dim + k));
  }

  void generate_inputs_on_device(const Space& space, std::uint64_t seed) {
    const auto points = points_.device;
    const std::int64_t dim = params_.dim;
    Kokkos::parallel_for(
        "distance::generate", Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {0, 0}, {std::int64_t(n_), dim}),
        KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t k) {
          points(i, k) = static_cast<Scalar>(uniform01(seed, static_cast<std::uint64_t>(i * dim + k)));
        });
  }

  void compute(const Space& space) {
    const auto points = points_.device;
    const auto distances = distances_.device;
    const int dim = params_.dim;
    const bool squared = params_.squared;
    const auto n = static_cast<std::int64_t>(n_);
    Kokkos::parallel_for(
        "distance::direct", Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {0, 0}, {n, n}),
        KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
          Scalar s = 0;
          for (int k = 0; k < dim; ++k) {
            const Scalar d = points(i, k) - points(j, k);
            s += d * d;
          }
          distances(i, j) = squared ? s : compat::math::sqrt(s);
        });
  }

  WorkEstimate work() const {
    const double entries = static_cast<double>(n_) * static_cast<double>(n_);
    // Per entry: D subtractions, D multiplications, D additions, and a square root.
    return {entries * (3.0 * params_.dim + (params_.squared ? 0 : 1)),
            static_cast<double>(points_.bytes()), static_cast<double>(distances_.bytes())};
  }

  Verification verify(std::optional<double> tolerance) const {
    Verification v;
    v.checked = true;
    v.tolerance = tolerance.value_or(default_tolerance<Scalar>(params_.dim));
    v.reference = "host long-double loops";
    const auto points = points_.host;
    const auto distances = distances_.host;
    const std::vector<std::size_t> rows = reference_rows(n_);
    // Relative to the typical distance, so entries near zero (the diagonal) are held to an
    // absolute bound instead of an impossible relative one.
    const double scale = params_.squared ? params_.dim / 6.0 : std::sqrt(params_.dim / 6.0);
    std::size_t bad = 0;
    for (std::size_t i : rows) {
      for (std::size_t j = 0; j < n_; ++j) {
        const long double ref = reference_distance(points, i, j, params_.dim, params_.squared);
        const double got = static_cast<double>(distances(i, j));
        const double abs_err = std::abs(static_cast<double>(got - ref));
        const double rel_err = abs_err / std::max(static_cast<double>(ref), scale);
        v.max_abs_error = std::max(v.max_abs_error, abs_err);
        v.max_rel_error = std::max(v.max_rel_error, std::isnan(rel_err) ? INFINITY : rel_err);
        if (!(rel_err <= v.tolerance) && bad++ == 0) {
          std::ostringstream msg;
          msg.precision(17);
          msg << "D(" << i << "," << j << ") = " << got << ", reference " << static_cast<double>(ref);
          v.detail = msg.str();
        }
      }
    }
    v.passed = bad == 0;
    std::ostringstream summary;
    summary << rows.size() << " of " << n_ << " rows checked";
    if (bad > 0) summary << "; " << bad << " wrong entries, first " << v.detail;
    v.detail = summary.str();
    return v;
  }

  // Direct access for tests.
  Field<Scalar**, Space>& points() { return points_; }
  Field<Scalar**, Space>& distances() { return distances_; }

 private:
  Params params_;
  std::string variant_;
  std::size_t n_;
  Field<Scalar**, Space> points_;
  Field<Scalar**, Space> distances_;
};

struct DistanceWorkload {
  static constexpr const char* name = "distance";
  static constexpr const char* summary = "Euclidean distance matrix of N random points (seed 002)";
  static constexpr const char* size_meaning = "number of points N (output N x N)";
  using Params = distance::Params;
  template <class Scalar, class Space>
  using Kernel = distance::Kernel<Scalar, Space>;

  static std::vector<VariantInfo> variants() { return {{"direct", "one thread per entry (MDRangePolicy)", ""}}; }

  static std::size_t footprint_bytes(const Params& p, std::size_t n, std::size_t scalar_bytes) {
    return (n * static_cast<std::size_t>(p.dim) + n * n) * scalar_bytes;
  }

  static std::vector<std::pair<std::string, std::string>> describe(const Params& p) {
    return {{"dim", std::to_string(p.dim)}, {"squared", p.squared ? "true" : "false"}};
  }

  static Params parse(MapReader& r) {
    Params p;
    if (auto dim = r.integer("dim", 1, 1024)) p.dim = static_cast<int>(*dim);
    if (auto sq = r.boolean("squared")) p.squared = *sq;
    return p;
  }
};

}  // namespace miniapp::distance
