#pragma once
// Seed 000 (NREL): the elementwise `z = x ** y` of its numba copy experiment over arrays of
// shape (rows, size), and the BLAS3 matrix-matrix product it names as the model GPU workload,
// C = alpha*A*B + beta*C0, hand-written (naive, tiled) and through Kokkos Kernels.

#include "miniapp/core/field.hpp"
#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/random.hpp"
#include "miniapp/core/workload.hpp"
#include "miniapp/workloads/matrix/gemm_tiled.hpp"

#include <KokkosBlas3_gemm.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace miniapp::matrix {

enum class Variant { Elementwise, GemmNaive, GemmTiled, GemmKokkosKernels };
enum class Operation { Power, Multiply };

struct Params {
  Operation op = Operation::Power;
  int rows = 3;  // elementwise: the seed's arrays are (3, 1e9)
  // gemm: each unset extent is the case's size.
  std::optional<std::size_t> m, n, k;
  double alpha = 1.0;
  double beta = 0.0;
  // gemm-tiled: 0 takes the space's default (default_tiles()).
  int tile_m = 0, tile_n = 0, tile_k = 0;
};

inline Variant parse_variant(const std::string& name) {
  if (name == "elementwise") return Variant::Elementwise;
  if (name == "gemm-naive") return Variant::GemmNaive;
  if (name == "gemm-tiled") return Variant::GemmTiled;
  if (name == "gemm-kokkos-kernels") return Variant::GemmKokkosKernels;
  throw std::invalid_argument("matrix: unknown variant '" + name + "'");
}

struct GemmShape {
  std::size_t m = 0, n = 0, k = 0;
};

inline GemmShape gemm_shape(const Params& p, std::size_t size) {
  return {p.m.value_or(size), p.n.value_or(size), p.k.value_or(size)};
}

// Elements checked against the reference: all up to this many, an even spread beyond.
inline constexpr std::size_t kMaxCheckedElements = std::size_t(1) << 24;
inline constexpr std::size_t kSampledElements = std::size_t(1) << 20;
// GEMM rows checked: all while rows * N * K stays under this many multiply-adds, else an even
// spread of rows (at least kMinSampledRows) that does.
inline constexpr double kReferenceMultiplyAdds = 1 << 27;
inline constexpr std::size_t kMinSampledRows = 16;

inline std::vector<std::size_t> even_sample(std::size_t total, std::size_t wanted) {
  std::vector<std::size_t> picked;
  if (total <= wanted) {
    for (std::size_t i = 0; i < total; ++i) picked.push_back(i);
  } else {
    for (std::size_t s = 0; s < wanted; ++s) picked.push_back(s * (total - 1) / (wanted - 1));
  }
  return picked;
}

inline std::vector<std::size_t> gemm_reference_rows(const GemmShape& s) {
  const double per_row = static_cast<double>(s.n) * static_cast<double>(s.k);
  const auto affordable = static_cast<std::size_t>(kReferenceMultiplyAdds / std::max(per_row, 1.0));
  return even_sample(s.m, std::max(affordable, kMinSampledRows));
}

// Inputs in (0, 1] for the elementwise form: pow(x, y) is defined and finite, as in the seed's
// np.random.rand (which can give 0; 0 ** y is fine but x = 0 makes its relative error meaningless).
KOKKOS_INLINE_FUNCTION double positive_uniform(std::uint64_t seed, std::uint64_t index) {
  return 1.0 - uniform01(seed, index);
}
// GEMM inputs in [-1, 1): sums cancel, as in real data.
KOKKOS_INLINE_FUNCTION double signed_uniform(std::uint64_t seed, std::uint64_t index) {
  return 2.0 * uniform01(seed, index) - 1.0;
}

template <class Scalar, class Space>
class Kernel {
 public:
  using Matrix = Field<Scalar**, Space>;

  Kernel(const Params& p, const std::string& variant, std::size_t size)
      : params_(p),
        variant_(parse_variant(variant)),
        cols_(size),
        shape_(gemm_shape(p, size)),
        tiles_(resolve_tiles(p)),
        x_("x", elementwise() ? p.rows : 0, elementwise() ? size : 0),
        y_("y", elementwise() ? p.rows : 0, elementwise() ? size : 0),
        z_("z", elementwise() ? p.rows : 0, elementwise() ? size : 0),
        a_("A", elementwise() ? 0 : shape_.m, elementwise() ? 0 : shape_.k),
        b_("B", elementwise() ? 0 : shape_.k, elementwise() ? 0 : shape_.n),
        c0_("C0", reads_c0() ? shape_.m : 0, reads_c0() ? shape_.n : 0),
        c_("C", elementwise() ? 0 : shape_.m, elementwise() ? 0 : shape_.n) {}

  std::vector<Transferable*> inputs() {
    if (elementwise()) return {&x_, &y_};
    if (reads_c0()) return {&a_, &b_, &c0_};
    return {&a_, &b_};
  }
  std::vector<Transferable*> outputs() {
    if (elementwise()) return {&z_};
    return {&c_};
  }

  void generate_inputs(std::uint64_t seed) {
    if (elementwise()) {
      fill_host(x_, seed, 0, positive_uniform);
      fill_host(y_, seed, x_.device.span(), positive_uniform);
    } else {
      fill_host(a_, seed, 0, signed_uniform);
      fill_host(b_, seed, a_.device.span(), signed_uniform);
      fill_host(c0_, seed, a_.device.span() + b_.device.span(), signed_uniform);
    }
  }

  void generate_inputs_on_device(const Space& space, std::uint64_t seed) {
    if (elementwise()) {
      fill_device<false>(space, x_, seed, 0);
      fill_device<false>(space, y_, seed, x_.device.span());
    } else {
      fill_device<true>(space, a_, seed, 0);
      fill_device<true>(space, b_, seed, a_.device.span());
      fill_device<true>(space, c0_, seed, a_.device.span() + b_.device.span());
    }
  }

  void compute(const Space& space) {
    switch (variant_) {
      case Variant::Elementwise: return compute_elementwise(space);
      case Variant::GemmNaive: return compute_gemm_naive(space);
      case Variant::GemmTiled:
        return gemm_tiled(space, tiles_, static_cast<Scalar>(params_.alpha), a_.device, b_.device,
                          static_cast<Scalar>(params_.beta), c0_.device, c_.device);
      case Variant::GemmKokkosKernels: return compute_gemm_kokkos_kernels(space);
    }
  }

  WorkEstimate work() const {
    const double s = sizeof(Scalar);
    if (elementwise()) {
      // One operation per element, pow counted as one like a multiply.
      const double n = static_cast<double>(x_.device.span());
      return {n, 2 * n * s, n * s};
    }
    const double m = shape_.m, n = shape_.n, k = shape_.k;
    // 2MNK for the products and sums; the alpha/beta scaling (O(MN)) is not counted, as in BLAS.
    return {2 * m * n * k, (m * k + k * n + (reads_c0() ? m * n : 0)) * s, m * n * s};
  }

  Verification verify(std::optional<double> tolerance) const {
    return elementwise() ? verify_elementwise(tolerance) : verify_gemm(tolerance);
  }

  // Direct access for tests and benchmarks.
  Matrix& x() { return x_; }
  Matrix& y() { return y_; }
  Matrix& z() { return z_; }
  Matrix& a() { return a_; }
  Matrix& b() { return b_; }
  Matrix& c0() { return c0_; }
  Matrix& c() { return c_; }
  const TileShape& tiles() const { return tiles_; }
  const GemmShape& shape() const { return shape_; }

  // The kernel launchers are public: CUDA extended lambdas may not live in private or
  // protected member functions.
  bool elementwise() const { return variant_ == Variant::Elementwise; }
  bool reads_c0() const { return !elementwise() && params_.beta != 0.0; }

  static TileShape resolve_tiles(const Params& p) {
    TileShape t = default_tiles<Space>();
    if (p.tile_m > 0) t.m = p.tile_m;
    if (p.tile_n > 0) t.n = p.tile_n;
    if (p.tile_k > 0) t.k = p.tile_k;
    return t;
  }

  template <class Generator>
  static void fill_host(Matrix& f, std::uint64_t seed, std::size_t offset, Generator value) {
    Scalar* out = f.host.data();
    const std::size_t count = f.host.span();
    for (std::size_t e = 0; e < count; ++e) out[e] = static_cast<Scalar>(value(seed, offset + e));
  }

  template <bool Signed>
  static void fill_device(const Space& space, Matrix& f, std::uint64_t seed, std::size_t offset) {
    // Fields are contiguous (LayoutRight): element e of the span is element e of the host fill.
    Scalar* out = f.device.data();
    Kokkos::parallel_for(
        "matrix::generate", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, f.device.span()),
        KOKKOS_LAMBDA(const std::int64_t e) {
          const std::uint64_t index = offset + static_cast<std::uint64_t>(e);
          out[e] = static_cast<Scalar>(Signed ? signed_uniform(seed, index) : positive_uniform(seed, index));
        });
  }

  void compute_elementwise(const Space& space) {
    // One flat loop over the contiguous arrays: no index arithmetic per element, so it vectorizes.
    const Scalar* x = x_.device.data();
    const Scalar* y = y_.device.data();
    Scalar* z = z_.device.data();
    const auto policy = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, z_.device.span());
    if (params_.op == Operation::Power)
      Kokkos::parallel_for(
          "matrix::elementwise-power", policy,
          KOKKOS_LAMBDA(const std::int64_t e) { z[e] = compat::math::pow(x[e], y[e]); });
    else
      Kokkos::parallel_for(
          "matrix::elementwise-multiply", policy, KOKKOS_LAMBDA(const std::int64_t e) { z[e] = x[e] * y[e]; });
  }

  void compute_gemm_naive(const Space& space) {
    const auto A = a_.device;
    const auto B = b_.device;
    const auto C0 = c0_.device;
    const auto C = c_.device;
    const auto alpha = static_cast<Scalar>(params_.alpha);
    const auto beta = static_cast<Scalar>(params_.beta);
    const bool read_c0 = reads_c0();
    const auto K = static_cast<std::int64_t>(shape_.k);
    Kokkos::parallel_for(
        "matrix::gemm-naive",
        Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {0, 0},
                                                      {std::int64_t(shape_.m), std::int64_t(shape_.n)}),
        KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
          Scalar sum = 0;
          for (std::int64_t k = 0; k < K; ++k) sum += A(i, k) * B(k, j);
          C(i, j) = alpha * sum + (read_c0 ? beta * C0(i, j) : Scalar(0));
        });
  }

  void compute_gemm_kokkos_kernels(const Space& space) {
    // Views on Device<Space, memory> so that Kokkos Kernels runs on this space (and, with the
    // vendor BLAS enabled, matches its host / cuBLAS / rocBLAS specializations for LayoutRight).
    using Device = Kokkos::Device<Space, typename Space::memory_space>;
    using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    using ConstMatrix = Kokkos::View<const Scalar**, Kokkos::LayoutRight, Device, Unmanaged>;
    using MutableMatrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, Device, Unmanaged>;
    const ConstMatrix A(a_.device.data(), shape_.m, shape_.k);
    const ConstMatrix B(b_.device.data(), shape_.k, shape_.n);
    const MutableMatrix C(c_.device.data(), shape_.m, shape_.n);
    // gemm updates C in place; starting from C0 keeps the inputs unchanged between iterations.
    if (reads_c0()) Kokkos::deep_copy(space, c_.device, c0_.device);
    KokkosBlas::gemm("N", "N", static_cast<Scalar>(params_.alpha), A, B, static_cast<Scalar>(params_.beta), C);
  }

  // Rounding of the kernel against the double reference: pow within a few units in the last
  // place of the precision, a multiply within one.
  double default_elementwise_tolerance() const {
    return (params_.op == Operation::Power ? 8.0 : 1.0) * std::numeric_limits<Scalar>::epsilon();
  }

  Verification verify_elementwise(std::optional<double> tolerance) const {
    Verification v;
    v.checked = true;
    v.tolerance = tolerance.value_or(default_elementwise_tolerance());
    v.reference = params_.op == Operation::Power ? "host std::pow in double" : "host multiplication in double";
    const Scalar* x = x_.host.data();
    const Scalar* y = y_.host.data();
    const Scalar* z = z_.host.data();
    const std::size_t total = z_.host.span();
    const std::vector<std::size_t> picked =
        even_sample(total, total <= kMaxCheckedElements ? total : kSampledElements);
    std::size_t bad = 0;
    std::string first;
    for (std::size_t e : picked) {
      const double xe = x[e], ye = y[e];
      const double ref = params_.op == Operation::Power ? std::pow(xe, ye) : xe * ye;
      const double got = z[e];
      const double abs_err = std::abs(got - ref);
      const double rel_err = abs_err / std::abs(ref);
      v.max_abs_error = std::max(v.max_abs_error, abs_err);
      v.max_rel_error = std::max(v.max_rel_error, std::isnan(rel_err) ? INFINITY : rel_err);
      if (!(rel_err <= v.tolerance) && bad++ == 0) {
        std::ostringstream msg;
        msg.precision(17);
        msg << "z(" << e / cols_ << "," << e % cols_ << ") = " << got << ", reference " << ref << " from x = " << xe
            << ", y = " << ye;
        first = msg.str();
      }
    }
    v.passed = bad == 0;
    std::ostringstream summary;
    summary << picked.size() << " of " << total << " elements checked";
    if (bad > 0) summary << "; " << bad << " wrong, first " << first;
    v.detail = summary.str();
    return v;
  }

  Verification verify_gemm(std::optional<double> tolerance) const {
    Verification v;
    v.checked = true;
    const std::size_t M = shape_.m, N = shape_.n, K = shape_.k;
    // The standard bound of a K-term dot product, K units of roundoff of the sum of magnitudes
    // (plus the alpha/beta scaling), relative to that sum: cancellation cannot fail it.
    v.tolerance = tolerance.value_or((K + 3.0) * std::numeric_limits<Scalar>::epsilon());
    v.reference = "host loops with double accumulation";
    const auto A = a_.host;
    const auto B = b_.host;
    const auto C0 = c0_.host;
    const auto C = c_.host;
    const double alpha = params_.alpha, beta = params_.beta;
    const std::vector<std::size_t> rows = gemm_reference_rows(shape_);
    std::vector<double> sum(N), magnitude(N);
    std::size_t bad = 0;
    std::string first;
    for (std::size_t i : rows) {
      std::fill(sum.begin(), sum.end(), 0.0);
      std::fill(magnitude.begin(), magnitude.end(), 0.0);
      for (std::size_t k = 0; k < K; ++k) {
        const double aik = A(i, k);
        for (std::size_t j = 0; j < N; ++j) {
          const double bkj = B(k, j);
          sum[j] += aik * bkj;
          magnitude[j] += std::abs(aik * bkj);
        }
      }
      for (std::size_t j = 0; j < N; ++j) {
        const double c0 = reads_c0() ? static_cast<double>(C0(i, j)) : 0.0;
        const double ref = alpha * sum[j] + beta * c0;
        const double scale = std::abs(alpha) * magnitude[j] + std::abs(beta * c0);
        const double got = C(i, j);
        const double abs_err = std::abs(got - ref);
        const double rel_err = scale > 0 ? abs_err / scale : abs_err;
        v.max_abs_error = std::max(v.max_abs_error, abs_err);
        v.max_rel_error = std::max(v.max_rel_error, std::isnan(rel_err) ? INFINITY : rel_err);
        if (!(rel_err <= v.tolerance) && bad++ == 0) {
          std::ostringstream msg;
          msg.precision(17);
          msg << "C(" << i << "," << j << ") = " << got << ", reference " << ref;
          first = msg.str();
        }
      }
    }
    v.passed = bad == 0;
    std::ostringstream summary;
    summary << rows.size() << " of " << M << " rows checked, error relative to sum |alpha a b| + |beta c0|";
    if (bad > 0) summary << "; " << bad << " wrong entries, first " << first;
    v.detail = summary.str();
    return v;
  }

 private:
  Params params_;
  Variant variant_;
  std::size_t cols_;
  GemmShape shape_;
  TileShape tiles_;
  Matrix x_, y_, z_;
  Matrix a_, b_, c0_, c_;
};

struct MatrixWorkload {
  static constexpr const char* name = "matrix";
  static constexpr const char* summary =
      "elementwise z = x ** y or x * y (seed 000) and GEMM C = alpha*A*B + beta*C0";
  static constexpr const char* size_meaning =
      "elementwise: columns of the rows x size arrays; gemm: M = N = K unless the keys m, n, k set them";
  using Params = matrix::Params;
  template <class Scalar, class Space>
  using Kernel = matrix::Kernel<Scalar, Space>;

  static std::vector<VariantInfo> variants() {
    return {{"elementwise", "z = x ** y (op: power) or x * y (op: multiply), one flat RangePolicy", ""},
            {"gemm-naive", "one thread per element of C (MDRangePolicy)", ""},
            {"gemm-tiled", "teams over tiles of C, A/B slices packed in scratch, register-blocked micro-kernel", ""},
            {"gemm-kokkos-kernels", "KokkosBlas::gemm (the vendor BLAS where Kokkos Kernels was built with it)", ""}};
  }

  // Elementwise and GEMM lay out different arrays for the same size.
  static Footprint footprint(const Params& p, const MeasurementSpec& spec) {
    const std::size_t scalar_bytes = spec.precision == Precision::Float32 ? sizeof(float) : sizeof(double);
    if (parse_variant(spec.variant) == Variant::Elementwise)
      return {3 * static_cast<std::size_t>(p.rows) * spec.size * scalar_bytes, 0};
    const GemmShape s = gemm_shape(p, spec.size);
    return {(s.m * s.k + s.k * s.n + (p.beta != 0.0 ? 2 : 1) * s.m * s.n) * scalar_bytes, 0};
  }

  static std::vector<std::pair<std::string, std::string>> describe(const Params& p) {
    auto extent = [](const std::optional<std::size_t>& e) { return e ? std::to_string(*e) : std::string("size"); };
    auto tile = [](int t) { return t > 0 ? std::to_string(t) : std::string("space default"); };
    std::ostringstream alpha, beta;
    alpha << p.alpha;
    beta << p.beta;
    return {{"op", p.op == Operation::Power ? "power" : "multiply"},
            {"rows", std::to_string(p.rows)},
            {"m", extent(p.m)},
            {"n", extent(p.n)},
            {"k", extent(p.k)},
            {"alpha", alpha.str()},
            {"beta", beta.str()},
            {"tile_m", tile(p.tile_m)},
            {"tile_n", tile(p.tile_n)},
            {"tile_k", tile(p.tile_k)}};
  }

  static Params parse(MapReader& r) {
    Params p;
    if (auto op = r.choice("op", {"power", "multiply"})) p.op = *op == "power" ? Operation::Power : Operation::Multiply;
    if (auto rows = r.integer("rows", 1, 1 << 20)) p.rows = static_cast<int>(*rows);
    const std::int64_t max_extent = std::int64_t(1) << 30;
    if (auto m = r.integer("m", 1, max_extent)) p.m = static_cast<std::size_t>(*m);
    if (auto n = r.integer("n", 1, max_extent)) p.n = static_cast<std::size_t>(*n);
    if (auto k = r.integer("k", 1, max_extent)) p.k = static_cast<std::size_t>(*k);
    // alpha and beta may be negative or zero, which MapReader::real (a lower bound) cannot say.
    auto finite = [&r](const std::string& key) -> std::optional<double> {
      const YAML::Node n = r.node(key);
      if (!n.IsDefined()) return std::nullopt;
      const std::optional<double> v = as_real(n);
      if (!v || !std::isfinite(*v)) {
        r.diagnostics().error(n, r.key_path(key), "found " + describe_node(n) + ", expected a finite number");
        return std::nullopt;
      }
      return v;
    };
    if (auto alpha = finite("alpha")) p.alpha = *alpha;
    if (auto beta = finite("beta")) p.beta = *beta;
    for (auto [key, target] : {std::pair{"tile_m", &p.tile_m}, std::pair{"tile_n", &p.tile_n}}) {
      if (auto t = r.integer(key, kTileMultiple, 1024)) {
        if (*t % kTileMultiple != 0)
          r.diagnostics().error(r.node(key), r.key_path(key),
                                "found " + std::to_string(*t) + ", expected a multiple of " +
                                    std::to_string(kTileMultiple) + " (the register blocks divide the tile)");
        else
          *target = static_cast<int>(*t);
      }
    }
    if (auto t = r.integer("tile_k", 1, 4096)) p.tile_k = static_cast<int>(*t);
    return p;
  }
};

}  // namespace miniapp::matrix
