#pragma once
// Euclidean distance matrix of N random points in D dimensions (seed 002, ETH Zurich):
// D(i, j) = || p_i - p_j ||, or its square; or, without the N x N matrix, per-row reductions
// (nearest other point, sum of distances).

#include "miniapp/core/field.hpp"
#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/memory.hpp"
#include "miniapp/core/random.hpp"
#include "miniapp/core/workload.hpp"
#include "miniapp/workloads/distance/kernels.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace miniapp::distance {

enum class Output { Matrix, RowMin, RowSum };
enum class Variant { Direct, Symmetric, Gemm, Tiled };

inline const char* to_string(Output o) {
  return o == Output::Matrix ? "matrix" : o == Output::RowMin ? "row-min" : "row-sum";
}

inline Variant parse_variant(const std::string& name) {
  if (name == "direct") return Variant::Direct;
  if (name == "symmetric") return Variant::Symmetric;
  if (name == "gemm") return Variant::Gemm;
  if (name == "tiled") return Variant::Tiled;
  throw std::invalid_argument("distance: unknown variant '" + name + "'");
}

struct Params {
  int dim = 3;
  bool squared = false;
  Output output = Output::Matrix;
  // Bytes the space may hold for one measurement; unset: what the device has free (host spaces:
  // no limit, the output lives in host memory anyway).
  std::optional<std::size_t> memory_budget;
  // Rows per block of a chunked run; set, it chunks whatever the budget.
  std::optional<std::size_t> chunk_rows;
};

// "512MiB", "2GB", "1e9" or a plain number of bytes.
inline std::optional<std::size_t> parse_bytes(const std::string& text) {
  std::size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::string unit = text.substr(pos);
  unit.erase(std::remove_if(unit.begin(), unit.end(), [](unsigned char c) { return std::isspace(c); }), unit.end());
  static const std::pair<const char*, double> units[] = {
      {"", 1.0},     {"B", 1.0},    {"KB", 1e3},           {"MB", 1e6},           {"GB", 1e9},
      {"TB", 1e12},  {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  for (const auto& [name, factor] : units)
    if (unit == name && value > 0 && value * factor < 1.8e19) return static_cast<std::size_t>(value * factor);
  return std::nullopt;
}

// How a matrix output is laid out in memory: whole in the space, or in row blocks streamed to
// the host when the matrix exceeds the budget.
struct BlockPlan {
  bool chunked = false;
  std::size_t rows_per_block = 0;
  std::size_t blocks = 1;
  std::optional<std::size_t> budget;
};

// Two block buffers (double buffering where copies overlap compute).
inline constexpr std::size_t kBlockBuffers = 2;

inline BlockPlan plan_blocks(const Params& p, std::size_t n, std::size_t scalar_bytes,
                             std::optional<std::size_t> budget) {
  BlockPlan plan;
  plan.budget = budget;
  plan.rows_per_block = n;
  if (p.output != Output::Matrix || n == 0) return plan;
  const std::size_t row_bytes = n * scalar_bytes;
  // Points twice (as given and coordinate-major), norms.
  const std::size_t fixed = 2 * n * static_cast<std::size_t>(p.dim) * scalar_bytes + row_bytes;
  if (p.chunk_rows) {
    plan.rows_per_block = std::min(*p.chunk_rows, n);
  } else if (budget && fixed + n * row_bytes > *budget) {
    const std::size_t room = *budget > fixed ? *budget - fixed : 0;
    plan.rows_per_block = std::clamp<std::size_t>(room / (kBlockBuffers * row_bytes), 1, n);
  }
  plan.chunked = plan.rows_per_block < n;
  plan.blocks = (n + plan.rows_per_block - 1) / plan.rows_per_block;
  return plan;
}

// The budget in effect for a space: the deck's, else 90% of the device's free memory (the rest
// for Kokkos and Kokkos Kernels' own allocations).
inline std::optional<std::size_t> budget_for(const Params& p, const std::string& space, bool host_space) {
  if (p.memory_budget) return p.memory_budget;
  if (host_space) return std::nullopt;
  if (const auto free_bytes = available_device_memory(space)) return *free_bytes / 10 * 9;
  return std::nullopt;
}

// Rows checked against the reference: all of them up to this N, an even spread beyond.
inline constexpr std::size_t kMaxReferenceRows = 2048;
inline constexpr std::size_t kSampledRows = 256;
inline constexpr std::size_t kTriangleTriples = 4096;

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

// The gemm form loses what x2 + y2 - 2 x.y cancels: its absolute error in D^2 is that of
// quantities of size |x|^2, so relative to a distance d it grows like eps |x|^2 / d^2 (squared)
// or sqrt(eps |x|^2) / d near d = 0 (plain). Returned relative to `scale`, the typical distance.
template <class Scalar>
double gemm_cancellation_tolerance(int dim, bool squared, double max_norm2, double scale) {
  const double abs_sq = 4.0 * (dim + 3) * static_cast<double>(std::numeric_limits<Scalar>::epsilon()) * 2.0 * max_norm2;
  return (squared ? abs_sq : std::sqrt(abs_sq)) / scale;
}

// Variants where chunked copies overlap compute in this build, for --list and the results.
inline std::string overlap_spaces() {
  std::string names;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (compat::ConcurrentInstances<Space>::concurrent()) names += (names.empty() ? "" : ", ") + space_name<Space>();
  });
  return names.empty() ? "no compiled space (host spaces have nothing to overlap)" : names;
}

namespace detail {
// The first failure, with its message, and how many there were.
struct Failures {
  std::size_t count = 0;
  std::string first;
  template <class Describe>
  void add(Describe&& describe) {
    if (count++ == 0) first = describe();
  }
};

inline std::string format_entry(const char* what, std::size_t i, std::size_t j, double got, double expected) {
  std::ostringstream msg;
  msg.precision(17);
  msg << what << "D(" << i << "," << j << ") = " << got << ", " << expected;
  return msg.str();
}
}  // namespace detail

template <class Scalar, class Space>
class Kernel {
  using HostOutput = Kokkos::Device<Kokkos::DefaultHostExecutionSpace, typename compat::pinned_host_memory<Space>::type>;
  using MatrixView = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::memory_space>;

 public:
  using HostMatrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

  Kernel(const Params& p, const std::string& variant, std::size_t n)
      : params_(p),
        variant_(parse_variant(variant)),
        n_(n),
        plan_(plan_blocks(p, n, sizeof(Scalar), budget_for(p, space_name<Space>(), is_host_space<Space>()))),
        points_("points", n, p.dim),
        coordinates_("points (coordinate-major)", reads_coordinates() ? n : 0, p.dim),
        distances_("distances", matrix_rows(false), matrix_rows(false)),
        streamed_("distances (streamed to host)", matrix_rows(true), matrix_rows(true)),
        nearest_("nearest distance", p.output == Output::RowMin ? n : 0),
        nearest_index_("nearest index", p.output == Output::RowMin ? n : 0),
        row_sums_("row sum", p.output == Output::RowSum ? n : 0) {
    if (p.output == Output::Matrix && variant_ == Variant::Gemm) norms_ = Kokkos::View<Scalar*, typename Space::memory_space>("norms", n);
    if (plan_.chunked) {
      instances_ = std::make_unique<compat::ConcurrentInstances<Space>>(Space());
      const std::size_t buffers = overlaps() ? kBlockBuffers : 1;
      for (std::size_t b = 0; b < buffers; ++b) buffers_[b] = MatrixView("distance block", plan_.rows_per_block, n);
    }
  }

  std::vector<Transferable*> inputs() { return {&points_}; }
  std::vector<Transferable*> outputs() {
    switch (params_.output) {
      case Output::RowMin: return {&nearest_, &nearest_index_};
      case Output::RowSum: return {&row_sums_};
      default: return {plan_.chunked ? static_cast<Transferable*>(&streamed_) : &distances_};
    }
  }

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
    if (reads_coordinates()) kernels::coordinate_major(space, points_.device, coordinates_, params_.dim);
    const auto points = coordinates_;
    const int dim = params_.dim;
    const bool squared = params_.squared;
    const auto n = static_cast<std::int64_t>(n_);
    if (params_.output == Output::RowMin) {
      kernels::row_min(space, points, nearest_.device, nearest_index_.device, dim, squared);
      return;
    }
    if (params_.output == Output::RowSum) {
      kernels::row_sum(space, points, row_sums_.device, dim, squared);
      return;
    }
    if (variant_ == Variant::Gemm) kernels::squared_norms(space, points_.device, norms_, dim);
    if (!plan_.chunked) {
      if (variant_ == Variant::Symmetric) kernels::symmetric(space, points, distances_.device, dim, squared);
      else compute_rows(space, distances_.device, 0, n);
      return;
    }
    // Chunked: each block is computed into a buffer in the space and copied to the host output
    // here, inside compute, on the same instance (so in order). With two concurrent instances
    // block k's copy runs while block k + 1 is computed.
    const bool overlap = overlaps();
    const auto rows = static_cast<std::int64_t>(plan_.rows_per_block);
    for (std::size_t b = 0; b < plan_.blocks; ++b) {
      const std::int64_t row0 = static_cast<std::int64_t>(b) * rows;
      const std::int64_t count = std::min(rows, n - row0);
      const Space& instance = overlap ? (*instances_)[b] : space;
      const MatrixView& buffer = buffers_[overlap ? b % kBlockBuffers : 0];
      compute_rows(instance, buffer, row0, count);
      Kokkos::deep_copy(instance, Kokkos::subview(streamed_.device, Kokkos::make_pair(row0, row0 + count), Kokkos::ALL()),
                        Kokkos::subview(buffer, Kokkos::make_pair(std::int64_t(0), count), Kokkos::ALL()));
    }
    // The harness fences only `space`: the other instances join here so the output is complete.
    if (overlap) {
      (*instances_)[0].fence();
      (*instances_)[1].fence();
    }
  }

  WorkEstimate work() const {
    const double n = static_cast<double>(n_), s = sizeof(Scalar), d = params_.dim;
    const double entries = n * n, points = static_cast<double>(points_.bytes());
    const double root = params_.squared ? 0 : 1;
    switch (params_.output) {
      case Output::RowMin:  // D subtractions, multiplications, additions and a comparison per pair
        return {entries * (3.0 * d + 1.0) + n * root, points, n * (s + sizeof(std::int64_t))};
      case Output::RowSum:
        return {entries * (3.0 * d + 1.0 + root), points, n * s};
      default: break;
    }
    WorkEstimate w;
    switch (variant_) {
      case Variant::Symmetric:  // each pair once
        w = {0.5 * n * (n + 1) * (3.0 * d + root), points, entries * s};
        break;
      case Variant::Gemm:  // the cross term, then x2 + y2 added, clamped, rooted: C is written twice
        w = {entries * (2.0 * d + 3.0 + root) + n * 2.0 * d, points + entries * s + n * s, 2.0 * entries * s};
        break;
      default:
        w = {entries * (3.0 * d + root), points, entries * s};
    }
    if (plan_.chunked) {  // the block copies to the host, inside compute
      w.bytes_read += entries * s;
      w.bytes_written += entries * s;
    }
    return w;
  }

  Verification verify(std::optional<double> tolerance) const {
    return params_.output == Output::Matrix ? verify_matrix(tolerance) : verify_rows(tolerance);
  }

  // The matrix as the host sees it after the harness's copies (or the chunked run's own).
  HostMatrix matrix_host() const {
    const std::size_t rows = plan_.chunked ? streamed_.host.extent(0) : distances_.host.extent(0);
    return HostMatrix(plan_.chunked ? streamed_.host.data() : distances_.host.data(), rows, rows);
  }

  // Direct access for tests.
  Field<Scalar**, Space>& points() { return points_; }
  Field<Scalar*, Space>& nearest() { return nearest_; }
  Field<std::int64_t*, Space>& nearest_index() { return nearest_index_; }
  Field<Scalar*, Space>& row_sums() { return row_sums_; }
  const BlockPlan& block_plan() const { return plan_; }
  bool overlaps() const { return plan_.chunked && instances_ && instances_->concurrent() && variant_ != Variant::Gemm; }

 private:
  // Every kernel but the gemm form of the matrix reads the coordinate-major copy.
  bool reads_coordinates() const { return !(params_.output == Output::Matrix && variant_ == Variant::Gemm); }

  std::size_t matrix_rows(bool streamed) const {
    return params_.output == Output::Matrix && plan_.chunked == streamed ? n_ : 0;
  }

  // Rows [row0, row0 + count) into out(i - row0, j). Symmetric pairs rows with columns of other
  // blocks, so within a block it computes each entry directly.
  void compute_rows(const Space& space, const MatrixView& out, std::int64_t row0, std::int64_t count) const {
    const auto points = coordinates_;
    switch (variant_) {
      case Variant::Tiled: kernels::tiled(space, points, out, row0, count, params_.dim, params_.squared); break;
      case Variant::Gemm: kernels::gemm(space, points_.device, norms_, out, row0, count, params_.squared); break;
      default: kernels::direct(space, points, out, row0, count, params_.dim, params_.squared);
    }
  }

  double scale() const { return params_.squared ? params_.dim / 6.0 : std::sqrt(params_.dim / 6.0); }

  std::string layout_note() const {
    if (!plan_.chunked) return "";
    std::ostringstream s;
    s << "; chunked: " << plan_.blocks << " blocks of " << plan_.rows_per_block
      << " rows copied to the host inside compute (overlap " << (overlaps() ? "on" : "off") << ")";
    if (variant_ == Variant::Symmetric) s << ", blocks computed entry by entry";
    return s.str();
  }

  Verification verify_matrix(std::optional<double> tolerance) const {
    Verification v;
    v.checked = true;
    v.reference = "host long-double loops";
    const auto points = points_.host;
    const HostMatrix D = matrix_host();
    const double scale = this->scale();
    const int dim = params_.dim;
    const bool squared = params_.squared;
    double gemm_extra = 0;
    if (variant_ == Variant::Gemm) {
      double max_norm2 = 0;
      for (std::size_t i = 0; i < n_; ++i) {
        double s = 0;
        for (int k = 0; k < dim; ++k) s += static_cast<double>(points(i, k)) * static_cast<double>(points(i, k));
        max_norm2 = std::max(max_norm2, s);
      }
      gemm_extra = gemm_cancellation_tolerance<Scalar>(dim, squared, max_norm2, scale);
    }
    v.tolerance = tolerance.value_or(default_tolerance<Scalar>(dim) + gemm_extra);
    const std::vector<std::size_t> rows = reference_rows(n_);
    // Relative to the typical distance, so entries near zero (the diagonal) are held to an
    // absolute bound instead of an impossible relative one.
    detail::Failures wrong;
    double worst_true_rel = 0;  // against the distance itself: what near-identical points lose
    for (std::size_t i : rows) {
      for (std::size_t j = 0; j < n_; ++j) {
        const long double ref = reference_distance(points, i, j, dim, squared);
        const double got = static_cast<double>(D(i, j));
        const double abs_err = std::abs(static_cast<double>(got - ref));
        const double rel_err = abs_err / std::max(static_cast<double>(ref), scale);
        v.max_abs_error = std::max(v.max_abs_error, abs_err);
        v.max_rel_error = std::max(v.max_rel_error, std::isnan(rel_err) ? INFINITY : rel_err);
        if (i != j && ref > 0) worst_true_rel = std::max(worst_true_rel, abs_err / static_cast<double>(ref));
        if (!(rel_err <= v.tolerance))
          wrong.add([&] { return detail::format_entry("", i, j, got, static_cast<double>(ref)) + " (reference)"; });
      }
    }
    // Structure of a distance matrix, checked on the output alone.
    detail::Failures structure;
    const double bound = v.tolerance * scale;
    for (std::size_t i = 0; i < n_; ++i)
      if (!(std::abs(static_cast<double>(D(i, i))) <= bound))
        structure.add([&] { return detail::format_entry("diagonal ", i, i, D(i, i), 0.0); });
    for (std::size_t i : rows)
      for (std::size_t j = 0; j < n_; ++j) {
        const double a = D(i, j), b = D(j, i);
        if (!(std::abs(a - b) <= 2 * v.tolerance * std::max(std::abs(a), scale)))
          structure.add([&] { return detail::format_entry("asymmetric ", i, j, a, b) + " = D(j,i)"; });
      }
    const std::size_t triples = n_ >= 3 ? kTriangleTriples : 0;
    auto plain = [&](std::size_t i, std::size_t j) {
      const double d = D(i, j);
      return squared ? std::sqrt(std::max(d, 0.0)) : d;
    };
    const double plain_bound = 3 * v.tolerance * (squared ? std::sqrt(scale) : scale) + (squared ? std::sqrt(bound) : 0);
    for (std::size_t t = 0; t < triples; ++t) {
      const std::size_t i = splitmix64(3 * t) % n_, j = splitmix64(3 * t + 1) % n_, k = splitmix64(3 * t + 2) % n_;
      if (!(plain(i, k) <= plain(i, j) + plain(j, k) + plain_bound))
        structure.add([&] {
          std::ostringstream msg;
          msg << "triangle inequality fails: D(" << i << "," << k << ") > D(" << i << "," << j << ") + D(" << j << ","
              << k << ")";
          return msg.str();
        });
    }
    v.passed = wrong.count == 0 && structure.count == 0;
    std::ostringstream summary;
    summary.precision(3);
    summary << rows.size() << " of " << n_ << " rows checked; zero diagonal, symmetry, triangle inequality on "
            << triples << " triples";
    if (wrong.count > 0) summary << "; " << wrong.count << " wrong entries, first " << wrong.first;
    if (structure.count > 0) summary << "; " << structure.count << " structural failures, first " << structure.first;
    summary << "; worst error relative to the distance itself " << worst_true_rel;
    if (variant_ == Variant::Gemm)
      summary << " (gemm: tolerance " << v.tolerance << " includes " << gemm_extra
              << " for the cancellation in x2 + y2 - 2 x.y)";
    summary << layout_note();
    v.detail = summary.str();
    return v;
  }

  Verification verify_rows(std::optional<double> tolerance) const {
    Verification v;
    v.checked = true;
    v.reference = "host long-double loops over all j";
    const bool row_min = params_.output == Output::RowMin;
    // A sum of N terms of one sign in double adds at most N roundings of the sum to the entries'.
    const double accumulation = row_min ? 0.0 : static_cast<double>(n_) * std::numeric_limits<double>::epsilon();
    v.tolerance = tolerance.value_or(default_tolerance<Scalar>(params_.dim) + accumulation);
    const auto points = points_.host;
    const double scale = this->scale();
    const std::vector<std::size_t> rows = reference_rows(n_);
    detail::Failures wrong;
    auto check = [&](double got, long double ref, const std::string& what) {
      const double abs_err = std::abs(static_cast<double>(got - ref));
      const double rel_err = abs_err / std::max(static_cast<double>(ref), scale);
      v.max_abs_error = std::max(v.max_abs_error, abs_err);
      v.max_rel_error = std::max(v.max_rel_error, std::isnan(rel_err) ? INFINITY : rel_err);
      if (!(rel_err <= v.tolerance))
        wrong.add([&] {
          std::ostringstream msg;
          msg.precision(17);
          msg << what << " = " << got << ", reference " << static_cast<double>(ref);
          return msg.str();
        });
    };
    for (std::size_t i : rows) {
      long double best = INFINITY, sum = 0;
      for (std::size_t j = 0; j < n_; ++j) {
        const long double d = reference_distance(points, i, j, params_.dim, params_.squared);
        sum += d;
        if (j != i) best = std::min(best, d);
      }
      const std::string row = std::to_string(i);
      if (!row_min) {
        check(row_sums_.host(i), sum, "row sum(" + row + ")");
        continue;
      }
      const std::int64_t index = nearest_index_.host(i);
      if (n_ == 1) {
        if (index != -1) wrong.add([&] { return "nearest index(0) = " + std::to_string(index) + ", expected -1 (no other point)"; });
        continue;
      }
      check(nearest_.host(i), best, "nearest distance(" + row + ")");
      if (index < 0 || static_cast<std::size_t>(index) >= n_ || static_cast<std::size_t>(index) == i)
        wrong.add([&] { return "nearest index(" + row + ") = " + std::to_string(index) + " is not another point"; });
      else
        check(static_cast<double>(reference_distance(points, i, static_cast<std::size_t>(index), params_.dim,
                                                     params_.squared)),
              best, "distance to nearest index(" + row + ") = " + std::to_string(index));
    }
    v.passed = wrong.count == 0;
    std::ostringstream summary;
    summary << rows.size() << " of " << n_ << " rows checked (" << to_string(params_.output) << ")";
    if (wrong.count > 0) summary << "; " << wrong.count << " wrong, first " << wrong.first;
    v.detail = summary.str();
    return v;
  }

  Params params_;
  Variant variant_;
  std::size_t n_;
  BlockPlan plan_;
  Field<Scalar**, Space> points_;
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, typename Space::memory_space> coordinates_;
  Field<Scalar**, Space> distances_;     // the matrix in the space (unchunked)
  Field<Scalar**, HostOutput> streamed_;  // the matrix on the host only (chunked)
  Field<Scalar*, Space> nearest_;
  Field<std::int64_t*, Space> nearest_index_;
  Field<Scalar*, Space> row_sums_;
  Kokkos::View<Scalar*, typename Space::memory_space> norms_;
  MatrixView buffers_[kBlockBuffers];
  std::unique_ptr<compat::ConcurrentInstances<Space>> instances_;
};

struct DistanceWorkload {
  static constexpr const char* name = "distance";
  static constexpr const char* summary = "Euclidean distance matrix of N random points (seed 002)";
  static constexpr const char* size_meaning = "number of points N (output N x N, or N per-row values)";
  using Params = distance::Params;
  template <class Scalar, class Space>
  using Kernel = distance::Kernel<Scalar, Space>;

  static std::vector<VariantInfo> variants() {
    const std::string chunked = "; chunked output overlaps copies with compute on " + overlap_spaces();
    return {{"direct", "an entry per vector lane, a row per thread (TeamPolicy, j contiguous)" + chunked, ""},
            {"symmetric", "each pair once, both entries written (32 x 32 tile pairs of the triangle)", ""},
            {"gemm", "x2 + y2 - 2 x.y with KokkosBlas::gemm, clamped at zero (CuPy's form; loses accuracy "
                     "for near-identical points)", ""},
            {"tiled", "teams of 16 rows, column points staged in scratch memory" + chunked, ""}};
  }

  static Footprint footprint(const Params& p, const MeasurementSpec& spec) {
    const std::size_t s = spec.precision == Precision::Float32 ? sizeof(float) : sizeof(double);
    const std::size_t n = spec.size;
    const std::size_t points = 2 * n * static_cast<std::size_t>(p.dim) * s;  // as given, coordinate-major
    switch (p.output) {
      case Output::RowMin: return {points + n * (s + sizeof(std::int64_t)), 0};
      case Output::RowSum: return {points + n * s, 0};
      default: break;
    }
    const BlockPlan plan = plan_blocks(p, n, s, budget_for(p, spec.space, is_host_space_name(spec.space)));
    const std::size_t norms = spec.variant == "gemm" ? n * s : 0;
    if (!plan.chunked) return {points + norms + n * n * s, 0};
    return {points + norms + kBlockBuffers * plan.rows_per_block * n * s, n * n * s};
  }

  static std::vector<std::pair<std::string, std::string>> describe(const Params& p) {
    return {{"dim", std::to_string(p.dim)},
            {"squared", p.squared ? "true" : "false"},
            {"output", to_string(p.output)},
            {"memory_budget", p.memory_budget ? std::to_string(*p.memory_budget) : "free device memory"},
            {"chunk_rows", p.chunk_rows ? std::to_string(*p.chunk_rows) : "from memory_budget"}};
  }

  static Params parse(MapReader& r) {
    Params p;
    if (auto dim = r.integer("dim", 1, 1024)) p.dim = static_cast<int>(*dim);
    if (auto sq = r.boolean("squared")) p.squared = *sq;
    if (auto out = r.choice("output", {"matrix", "row-min", "row-sum"}))
      p.output = *out == "row-min" ? Output::RowMin : *out == "row-sum" ? Output::RowSum : Output::Matrix;
    if (const YAML::Node budget = r.node("memory_budget"); budget.IsDefined()) {
      const std::optional<std::size_t> bytes = budget.IsScalar() ? parse_bytes(budget.Scalar()) : std::nullopt;
      if (bytes) p.memory_budget = bytes;
      else
        r.diagnostics().error(budget, r.key_path("memory_budget"),
                              "found " + describe_node(budget) +
                                  ", expected a positive number of bytes, optionally with a unit (B, KB, MB, GB, "
                                  "KiB, MiB, GiB), e.g. 512MiB");
    }
    if (auto rows = r.integer("chunk_rows", 1, std::numeric_limits<std::int32_t>::max()))
      p.chunk_rows = static_cast<std::size_t>(*rows);
    return p;
  }
};

}  // namespace miniapp::distance
