#include "miniapp/core/deck.hpp"
#include "miniapp/core/host_vector_math.hpp"
#include "miniapp/core/pack16.hpp"
#include "miniapp/core/pow_exp2.hpp"
#if MINIAPP_HOST_SIMD
#include "miniapp/core/host_powf_float.hpp"
#endif
#include "miniapp/workloads/matrix/matrix.hpp"

#include "kernel_helpers.hpp"
#include "space_types.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace miniapp;
using miniapp::testing::policies_for;
using miniapp::testing::run_once;

template <class Space>
class MatrixTest : public ::testing::Test {};
TYPED_TEST_SUITE(MatrixTest, miniapp::testing::SpaceTypes, miniapp::testing::SpaceNames);

namespace {

// gemm-kokkos-kernels only where this build has Kokkos Kernels.
const std::vector<std::string> kGemmVariants =
    miniapp::testing::runnable("matrix", {"gemm-naive", "gemm-tiled", "gemm-kokkos-kernels"});

MeasurementSpec matrix_spec(MirrorPolicy policy, int repetitions = 2) {
  MeasurementSpec s;
  s.policy = policy;
  s.warmup = 1;
  s.repetitions = repetitions;
  s.seed = 77;
  return s;
}

// A rectangular product with beta, by default with tiles small enough that every edge case is
// exercised: several k slices, a last slice shorter than the tile, partial tiles and register blocks.
matrix::Params rectangular(std::size_t m = 37, std::size_t n = 29, std::size_t k = 53,
                           matrix::TileShape tiles = {32, 32, 10}) {
  matrix::Params p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = -1.25;
  p.beta = 0.5;
  p.tile_m = tiles.m;
  p.tile_n = tiles.n;
  p.tile_k = tiles.k;
  return p;
}

template <class Matrix>
std::vector<double> values(const Matrix& f) {
  return std::vector<double>(f.host.data(), f.host.data() + f.host.span());
}

}  // namespace

TYPED_TEST(MatrixTest, ElementwiseKnownPowersAndProducts) {
  using Space = TypeParam;
  for (matrix::Operation op : {matrix::Operation::Power, matrix::Operation::Multiply}) {
    matrix::Params p;
    p.op = op;
    p.rows = 2;
    matrix::Elementwise<double, Space> k(p, "elementwise", 3);
    const double x[2][3] = {{2, 0.5, 4}, {9, 1, 0.25}};
    const double y[2][3] = {{3, 2, 0.5}, {0.5, 7, 2}};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) k.x().host(i, j) = x[i][j], k.y().host(i, j) = y[i][j];
    run_once(k);
    const double power[2][3] = {{8, 0.25, 2}, {3, 1, 0.0625}};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        EXPECT_DOUBLE_EQ(k.z().host(i, j), op == matrix::Operation::Power ? power[i][j] : x[i][j] * y[i][j])
            << i << "," << j;
  }
}

// x ** y on every pair of special operands (zeros of both signs, negatives, integers and
// non-integers as exponents, infinities, NaN, subnormals, the largest finite), in both
// precisions: what std::pow gives, NaN for NaN, the same infinity, zero for zero, else within the
// verification's 8 eps. On the host this is libmvec's vector pow (core/host_vector_math.hpp) where
// the build has it, whose special lanes take paths of their own.
template <class Scalar, class Space>
void expect_powers_of_special_operands() {
  using limits = std::numeric_limits<Scalar>;
  const std::vector<Scalar> xs = {0, -Scalar(0), 1, -1, 2, Scalar(0.5), -2, Scalar(-0.5), Scalar(3.7), -3,
                                  limits::infinity(), -limits::infinity(), limits::quiet_NaN(),
                                  limits::denorm_min(), limits::min(), limits::max(), Scalar(1e-3)};
  const std::vector<Scalar> ys = {0, -Scalar(0), 1, -1, Scalar(0.5), 2, 3, -3, Scalar(2.5), Scalar(-0.001),
                                  Scalar(40), limits::infinity(), -limits::infinity(), limits::quiet_NaN(),
                                  Scalar(1e10), Scalar(-1e10), Scalar(0.75)};
  matrix::Params p;
  p.op = matrix::Operation::Power;
  p.rows = xs.size();
  matrix::Elementwise<Scalar, Space> k(p, "elementwise", ys.size());
  for (std::size_t i = 0; i < xs.size(); ++i)
    for (std::size_t j = 0; j < ys.size(); ++j) k.x().host(i, j) = xs[i], k.y().host(i, j) = ys[j];
  run_once(k);
  for (std::size_t i = 0; i < xs.size(); ++i)
    for (std::size_t j = 0; j < ys.size(); ++j) {
      const Scalar z = k.z().host(i, j), ref = std::pow(xs[i], ys[j]);
      const std::string where = "pow(" + std::to_string(xs[i]) + ", " + std::to_string(ys[j]) + ") = " +
                                std::to_string(z) + ", std::pow " + std::to_string(ref);
      if (std::isnan(ref)) {
        EXPECT_TRUE(std::isnan(z)) << where;
      } else if (std::isinf(ref) || ref == 0) {
        EXPECT_EQ(z, ref) << where;
      } else {
        EXPECT_LE(std::abs(z - ref), 8 * limits::epsilon() * std::abs(ref)) << where;
      }
    }
}

TYPED_TEST(MatrixTest, ElementwisePowerOfSpecialOperandsMatchesStdPow) {
  expect_powers_of_special_operands<float, TypeParam>();
  expect_powers_of_special_operands<double, TypeParam>();
}

namespace {
// The ranges that stress a float power: x near 1 with large |y| (log2 x must keep its relative
// accuracy there), x over the whole float range, results next to the float limits, and both ends
// of each of the 16 subintervals of the register-table paths (core/host_powf_tables.hpp).
struct PowRange {
  const char* name;
  double x_low, x_high;
  bool x_by_exponent;  // x = 2^u for u uniform in [x_low, x_high)
  double y_low, y_high;
};
[[maybe_unused]] const PowRange kPowRanges[] = {{"x, y in (0, 1]", 0, 1, false, 0, 1},
                                                {"x near 1, |y| up to 1e6", 1 - 1e-4, 1 + 1e-4, false, -1e6, 1e6},
                                                {"x over the float range", -126, 127, true, -1, 1},
                                                {"results near the float limits", -10, 10, true, -14, 14},
                                                {"subinterval ends", 0.69, 1.41, false, -300, 300},
                                                {"x next to the subinterval of 1, |y log2 x| up to 126", 1.02, 1.05,
                                                 false, -4000, 4000}};

[[maybe_unused]] void fill_pow_operands(const PowRange& range, std::mt19937_64& random, std::vector<float>& x,
                                        std::vector<float>& y) {
  std::uniform_real_distribution<double> ux(range.x_low, range.x_high), uy(range.y_low, range.y_high);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double u = ux(random);
    x[i] = std::max(static_cast<float>(range.x_by_exponent ? std::exp2(u) : u), std::numeric_limits<float>::min());
    y[i] = static_cast<float>(uy(random));
  }
}

// z's distance from double-precision pow(x, y) in ulps of the float result; -1 where the float
// result is infinite or zero (then z must equal it exactly).
[[maybe_unused]] double pow_error_ulps(float x, float y, float z, std::string& where) {
  const double ref = std::pow(static_cast<double>(x), static_cast<double>(y));
  const auto rounded = static_cast<float>(ref);
  where = "pow(" + std::to_string(x) + ", " + std::to_string(y) + ") = " + std::to_string(z) + ", double pow " +
          std::to_string(ref);
  if (std::isinf(rounded) || rounded == 0) return z == rounded ? -1 : std::numeric_limits<double>::infinity();
  const double ulp = std::ldexp(1.0, std::max(std::ilogb(rounded), -126) - 23);
  return std::abs(static_cast<double>(z) - ref) / ulp;
}

// Whether two floats are the same bits (a NaN equals only its own bits).
[[maybe_unused]] bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Where the register-table paths compute the power themselves: x a positive normal float and
// |y log2 x| clear of their limit of 126.
[[maybe_unused]] bool in_register_table_range(float x, float y) {
  return x >= std::numeric_limits<float>::min() && std::isfinite(x) && std::isfinite(y) &&
         std::abs(static_cast<double>(y) * std::log2(static_cast<double>(x))) < 125.9;
}
}  // namespace

// The host's float x ** y against double-precision pow: every lane within 1 ulp; on AVX-512 and
// AVX2 builds the lanes the register-table path computes within 0.51 ulp, i.e. correctly rounded
// but for a double's error: a wrong polynomial term or table entry shows as whole ulps.
TEST(MatrixHostPower, FloatPowerWithinOneUlpOfDoublePrecisionPow) {
#if MINIAPP_HOST_VECTOR_POW
  std::mt19937_64 random(2026);
  const std::size_t n = 1 << 16;
  std::vector<float> x(n), y(n), z(n);
  for (const PowRange& range : kPowRanges) {
    fill_pow_operands(range, random, x, y);
    simd::pow(x.data(), y.data(), z.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      std::string where;
      const double error = pow_error_ulps(x[i], y[i], z[i], where);
      ASSERT_LE(error, 1.0) << range.name << ": " << where;
#if (defined(__AVX2__) && defined(__FMA__))
      if (in_register_table_range(x[i], y[i])) ASSERT_LE(error, 0.51) << range.name << ": " << where;
#endif
    }
  }
#else
  GTEST_SKIP() << "this build's host x ** y is std::pow per element (no libmvec, or a CUDA/HIP build)";
#endif
}

// In place (z the same array as x, or as y) the same bits as into a third array, with special
// operands in many of the power's blocks: their lanes are computed after the block, from x and y
// as they were.
TEST(MatrixHostPower, FloatPowerInPlaceEqualsIntoAnotherArray) {
#if MINIAPP_HOST_VECTOR_POW
  std::mt19937_64 random(2029);
  const std::size_t n = (1 << 15) + 5;
  std::vector<float> x(n), y(n), z(n);
  const float specials[] = {0.0f, -2.0f, std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()};
  for (const PowRange& range : kPowRanges) {
    fill_pow_operands(range, random, x, y);
    for (std::size_t i = 0; 97 * i < n; ++i) x[97 * i] = specials[i % std::size(specials)];
    simd::pow(x.data(), y.data(), z.data(), n);
    for (const bool into_x : {true, false}) {
      std::vector<float> a = x, b = y;
      float* const out = into_x ? a.data() : b.data();
      simd::pow(a.data(), b.data(), out, n);
      for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(out[i]) && std::isnan(z[i])) continue;
        ASSERT_EQ(std::memcmp(&out[i], &z[i], sizeof(float)), 0)
            << range.name << (into_x ? ", into x" : ", into y") << ": pow(" << x[i] << ", " << y[i] << ") is "
            << out[i] << " in place, " << z[i] << " into another array";
      }
    }
  }
#else
  GTEST_SKIP() << "this build's host x ** y is std::pow per element (no libmvec, or a CUDA/HIP build)";
#endif
}

#if MINIAPP_HOST_SIMD && defined(__AVX2__) && defined(__FMA__)
namespace {
// The register-table power of one width on its own, over an array whose length leaves an odd
// vector and a tail: every lane it computes within 0.51 ulp, it computes every lane in its range
// (a path that marked every lane special would pass the first check alone), and it leaves the
// tail to the caller.
constexpr float kMarked = -1.0f;  // no power of a positive x is negative
// The `slow` of power_array that sets the special lanes to kMarked.
template <class L>
auto mark() {
  return [](auto, auto, auto c, auto special) { return L::select(special, L::set(kMarked), c); };
}
template <class L>
void expect_register_table_power_within_half_an_ulp() {
  static const simd::powff::Tables<L> tables = simd::powff::make_tables<L>();
  std::mt19937_64 random(2027);
  const std::size_t n = (1 << 16) - 13, vectors = n - n % L::kLanes;
  std::vector<float> x(n), y(n), z(n);
  for (const PowRange& range : kPowRanges) {
    fill_pow_operands(range, random, x, y);
    std::fill(z.begin(), z.end(), 0.0f);
    ASSERT_EQ(simd::powff::power_array(tables, x.data(), y.data(), z.data(), n, mark<L>()), vectors);
    for (std::size_t i = 0; i < n; ++i) {
      if (i >= vectors) {
        ASSERT_EQ(z[i], 0.0f) << range.name << ": element " << i << " of the tail was written";
        continue;
      }
      std::string where;
      const double error = pow_error_ulps(x[i], y[i], z[i], where);
      if (z[i] == kMarked) {
        ASSERT_FALSE(in_register_table_range(x[i], y[i])) << range.name << ": left to libmvec: " << where;
        continue;
      }
      ASSERT_LE(error, 0.51) << range.name << ": " << where;
    }
  }
}
}  // namespace
#endif

TEST(MatrixHostPower, Avx2RegisterTablePowerComputesItsRangeWithinHalfAnUlp) {
#if MINIAPP_HOST_SIMD && defined(__AVX2__) && defined(__FMA__)
  expect_register_table_power_within_half_an_ulp<simd::powff::Avx2>();
#else
  GTEST_SKIP() << "this build targets no AVX2 with FMA (or is a CUDA/HIP build)";
#endif
}

TEST(MatrixHostPower, Avx512RegisterTablePowerComputesItsRangeWithinHalfAnUlp) {
#if MINIAPP_HOST_SIMD && defined(__AVX512F__) && defined(__FMA__)
  expect_register_table_power_within_half_an_ulp<simd::powff::Avx512>();
#else
  GTEST_SKIP() << "this build targets no AVX-512 (or is a CUDA/HIP build)";
#endif
}

// The two widths run the same steps on the same tables: every lane, special or not, equal bit for
// bit (NaN lanes as NaN), on every range above and on special operands.
TEST(MatrixHostPower, Avx512AndAvx2RegisterTablePowersAgreeBitForBit) {
#if MINIAPP_HOST_SIMD && defined(__AVX512F__) && defined(__FMA__)
  static const auto t8 = simd::powff::make_tables<simd::powff::Avx2>();
  static const auto t16 = simd::powff::make_tables<simd::powff::Avx512>();
  std::mt19937_64 random(2028);
  const std::size_t n = 1 << 14;
  std::vector<float> x(n), y(n), z8(n), z16(n);
  const float specials[] = {0.0f, -0.0f, -2.0f, 1.0f, std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min(), 1e30f};
  for (const PowRange& range : kPowRanges) {
    fill_pow_operands(range, random, x, y);
    for (std::size_t i = 0; i < std::size(specials); ++i) x[7 * i] = specials[i], y[11 * i + 1] = specials[i];
    simd::powff::power_array(t8, x.data(), y.data(), z8.data(), n, mark<simd::powff::Avx2>());
    simd::powff::power_array(t16, x.data(), y.data(), z16.data(), n, mark<simd::powff::Avx512>());
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isnan(z8[i]) && std::isnan(z16[i])) continue;
      ASSERT_EQ(std::memcmp(&z8[i], &z16[i], sizeof(float)), 0)
          << range.name << ": pow(" << x[i] << ", " << y[i] << ") is " << z8[i] << " on 8 lanes, " << z16[i] << " on 16";
    }
  }
#else
  GTEST_SKIP() << "this build targets no AVX-512 (or is a CUDA/HIP build)";
#endif
}

// pow_exp2's logarithm (the devices' power, written once for every space) is the register-table
// power's, step for step: every lane of log_part equal bit for bit, special flags included.
TEST(MatrixHostPower, Exp2PowerLogarithmIsTheRegisterTablePowersBitForBit) {
#if MINIAPP_HOST_SIMD && defined(__AVX2__) && defined(__FMA__)
  using L = simd::powff::Avx2;
  static const auto t = simd::powff::make_tables<L>();
  const auto table = pow_exp2::log_table(Kokkos::DefaultHostExecutionSpace());
  std::mt19937_64 random(2030);
  std::vector<float> x(1 << 14), y(x.size());
  for (const PowRange& range : kPowRanges) {
    fill_pow_operands(range, random, x, y);
    for (std::size_t e = 0; e < x.size(); e += L::kLanes) {
      const simd::powff::LogPart<L> lanes = simd::powff::log_part<L>(t, L::load(&x[e]), L::load(&y[e]));
      float h[L::kLanes], lo_big[L::kLanes], lo_rest[L::kLanes];
      std::int32_t special[L::kLanes];
      L::store(h, lanes.h);
      L::store(lo_big, lanes.lo_big);
      L::store(lo_rest, lanes.lo_rest);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(special), lanes.special_x);
      for (int l = 0; l < L::kLanes; ++l) {
        const pow_exp2::Logarithm s = pow_exp2::log2_parts(table.data(), x[e + l]);
        ASSERT_EQ(s.special, special[l] != 0) << range.name << ": x = " << x[e + l];
        if (s.special) continue;
        ASSERT_TRUE(same_bits(s.h, h[l]) && same_bits(s.lo_big, lo_big[l]) && same_bits(s.lo_rest, lo_rest[l]))
            << range.name << ": log2 of " << x[e + l] << " by pow_exp2 " << s.h << " + " << s.lo_big << " + " << s.lo_rest
            << ", by the register tables " << h[l] << " + " << lo_big[l] << " + " << lo_rest[l];
      }
    }
  }
#else
  GTEST_SKIP() << "this build targets no AVX2 with FMA (or is a CUDA/HIP build)";
#endif
}

// More elements than one host thread's chunk, and a length no vector width divides: every
// element, the tail included, passes verification (all elements are checked at this size).
TYPED_TEST(MatrixTest, ElementwisePowerVerifiesAcrossChunksAndTails) {
  using Space = TypeParam;
  matrix::Params p;
  p.op = matrix::Operation::Power;
  p.rows = 1;
  const std::size_t size = 2 * static_cast<std::size_t>(matrix::kHostPowChunk) + 13;
  matrix::Elementwise<float, Space> k32(p, "elementwise", size);
  matrix::Elementwise<double, Space> k64(p, "elementwise", size);
  MeasurementSpec spec;
  spec.policy = MirrorPolicy::AllResident;
  spec.warmup = 0;
  spec.repetitions = 1;
  const Measurement m32 = measure(k32, Space(), spec), m64 = measure(k64, Space(), spec);
  EXPECT_TRUE(m32.verification.passed) << m32.verification.detail;
  EXPECT_TRUE(m64.verification.passed) << m64.verification.detail;
  EXPECT_NE(m32.verification.detail.find(std::to_string(size) + " of " + std::to_string(size)), std::string::npos)
      << m32.verification.detail;
}

// A device form of `elementwise` (run(space, op, x, y, z)) computes every element once: against
// the host reference, with z first set to a stale value that fails it.
template <class Space, class Run>
void expect_elementwise_form_verifies(matrix::Operation op, std::size_t size, const std::string& form, const Run& run) {
  SCOPED_TRACE(form + ", " + std::to_string(size) + " columns");
  matrix::Params p;
  p.op = op;
  matrix::Elementwise<float, Space> k(p, "elementwise", size);
  k.generate_inputs(7);
  for (Transferable* f : k.inputs()) f->copy_to_device();
  Kokkos::deep_copy(k.z().device, -1.0f);
  run(Space(), op, k.x().device, k.y().device, k.z().device);
  k.z().copy_to_host();
  const Verification v = k.verify(std::nullopt);
  EXPECT_TRUE(v.passed) << v.detail;
}

// elementwise_strided (K elements per thread, a quarter or an eighth of the arrays apart; what
// `elementwise` runs on device spaces, K = 4): sizes that K divides and that it does not, power
// and multiply.
template <int K, class Space>
void expect_strided_elementwise_verifies(matrix::Operation op, std::size_t size) {
  expect_elementwise_form_verifies<Space>(op, size, "strided K = " + std::to_string(K), [](auto&&... a) {
    matrix::elementwise_strided<K>(a...);
  });
}

TYPED_TEST(MatrixTest, StridedElementwiseComputesEveryElementOnce) {
  using Space = TypeParam;
  for (const std::size_t size : {std::size_t{1}, std::size_t{8}, std::size_t{1001}}) {
    expect_strided_elementwise_verifies<1, Space>(matrix::Operation::Power, size);
    expect_strided_elementwise_verifies<4, Space>(matrix::Operation::Power, size);
    expect_strided_elementwise_verifies<8, Space>(matrix::Operation::Multiply, size);
    expect_strided_elementwise_verifies<3, Space>(matrix::Operation::Multiply, size);
  }
}

// elementwise_pipelined (R rounds of K elements a thread, the next round's loads before this
// round's values): sizes that K R divides, that it does not, and smaller than one thread's share.
template <int K, int R, class Space>
void expect_pipelined_elementwise_verifies(matrix::Operation op, std::size_t size) {
  expect_elementwise_form_verifies<Space>(
      op, size, "pipelined K = " + std::to_string(K) + ", R = " + std::to_string(R),
      [](auto&&... a) { matrix::elementwise_pipelined<K, R>(a...); });
}

TYPED_TEST(MatrixTest, PipelinedElementwiseComputesEveryElementOnce) {
  using Space = TypeParam;
  for (const std::size_t size : {std::size_t{1}, std::size_t{8}, std::size_t{32}, std::size_t{1001}}) {
    expect_pipelined_elementwise_verifies<4, 4, Space>(matrix::Operation::Power, size);
    expect_pipelined_elementwise_verifies<4, 8, Space>(matrix::Operation::Power, size);
    expect_pipelined_elementwise_verifies<3, 2, Space>(matrix::Operation::Multiply, size);
    expect_pipelined_elementwise_verifies<1, 16, Space>(matrix::Operation::Multiply, size);
  }
}

// elementwise_exp2 (pow by pow_exp2, prepared for devices) computes every element once, as the
// other forms.
TYPED_TEST(MatrixTest, Exp2ElementwiseComputesEveryElementOnce) {
  using Space = TypeParam;
  const auto table = pow_exp2::log_table(Space());
  for (const std::size_t size : {std::size_t{1}, std::size_t{8}, std::size_t{1001}}) {
    expect_elementwise_form_verifies<Space>(matrix::Operation::Power, size, "exp2 K = 4",
                                            [&](const Space& space, matrix::Operation, const auto& x, const auto& y,
                                                const auto& z) { matrix::elementwise_exp2<4>(space, x, y, z, table); });
  }
}

namespace {
// elementwise_packs<P> (16-byte packs, prepared for devices) against elementwise_strided with the
// same elements a thread, bit for bit, on arrays of `size` values starting `offset` values into
// their allocations: offset 0 takes the packs (the tail past the last whole pack included),
// offset 1 the fallback.
template <class Scalar, int P, class Space>
void expect_packs_equal_strided(matrix::Operation op, std::size_t size, std::size_t offset) {
  SCOPED_TRACE(std::to_string(size) + " values, offset " + std::to_string(offset) + ", " + std::to_string(P) +
               " packs a thread, " + (sizeof(Scalar) == 4 ? "float32" : "float64"));
  using View = Kokkos::View<Scalar*, typename Space::memory_space>;
  View xa("x", size + offset), ya("y", size + offset), za("z", size + offset), sa("strided", size + offset);
  const auto part = Kokkos::make_pair(offset, offset + size);
  const auto x = Kokkos::subview(xa, part), y = Kokkos::subview(ya, part), z = Kokkos::subview(za, part),
             strided = Kokkos::subview(sa, part);
  matrix::fill_device<false>(Space(), xa, 11, 0);
  matrix::fill_device<false>(Space(), ya, 12, 0);
  Kokkos::deep_copy(za, Scalar(-1));
  matrix::elementwise_packs<P>(Space(), op, x, y, z);
  matrix::elementwise_strided<P * Pack16<Scalar>::kValues>(Space(), op, x, y, strided);
  const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), za);
  const auto want = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sa);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < size; ++i) differing += got(offset + i) != want(offset + i);
  EXPECT_EQ(differing, 0u);
  if (offset > 0) EXPECT_EQ(got(0), Scalar(-1)) << "written before the array";
}
}  // namespace

// elementwise_packs (prepared for devices): every element once, with the strided form's values,
// whole packs and a tail, fewer values than a pack, arrays off the 16-byte boundary; with pow_exp2
// against the host reference.
TYPED_TEST(MatrixTest, PacksElementwiseEqualsTheStridedForm) {
  using Space = TypeParam;
  for (const std::size_t size : {std::size_t{1}, std::size_t{3}, std::size_t{8}, std::size_t{1001}})
    for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      expect_packs_equal_strided<float, 1, Space>(matrix::Operation::Power, size, offset);
      expect_packs_equal_strided<float, 2, Space>(matrix::Operation::Multiply, size, offset);
      expect_packs_equal_strided<double, 1, Space>(matrix::Operation::Power, size, offset);
      expect_packs_equal_strided<double, 2, Space>(matrix::Operation::Multiply, size, offset);
    }
  const auto table = pow_exp2::log_table(Space());
  for (const std::size_t size : {std::size_t{1}, std::size_t{1001}})
    expect_elementwise_form_verifies<Space>(
        matrix::Operation::Power, size, "exp2 in packs",
        [&](const Space& space, matrix::Operation, const auto& x, const auto& y, const auto& z) {
          matrix::elementwise_packs<1>(space, matrix::Operation::Power, x, y, z, matrix::Exp2Pow{table.data()});
        });
}

namespace {
// pow_exp2's logarithm of each x, computed on Space: per x its parts h, lo_big, lo_rest and 1 where
// it is special (else 0).
template <class Space, MINIAPP_KERNEL_UNIT>
std::vector<std::array<float, 4>> exp2_logarithms_on(const std::vector<float>& x) {
  const Space space;
  const auto table = pow_exp2::log_table(space);
  const pow_exp2::LogEntry* entries = table.data();
  const auto n = static_cast<std::int64_t>(x.size());
  Kokkos::View<float*, typename Space::memory_space> xs("x", x.size());
  Kokkos::View<float* [4], Kokkos::LayoutRight, typename Space::memory_space> parts("parts", x.size());
  auto host_x = Kokkos::create_mirror_view(xs);
  for (std::size_t i = 0; i < x.size(); ++i) host_x(i) = x[i];
  Kokkos::deep_copy(space, xs, host_x);
  Kokkos::parallel_for(
      "test::exp2-logarithms", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const pow_exp2::Logarithm l = pow_exp2::log2_parts(entries, xs(i));
        parts(i, 0) = l.h;
        parts(i, 1) = l.lo_big;
        parts(i, 2) = l.lo_rest;
        parts(i, 3) = l.special ? 1.0f : 0.0f;
      });
  auto host_parts = Kokkos::create_mirror_view(parts);
  Kokkos::deep_copy(space, host_parts, parts);
  space.fence();
  std::vector<std::array<float, 4>> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = {host_parts(i, 0), host_parts(i, 1), host_parts(i, 2), host_parts(i, 3)};
  return out;
}

// Which path pow_exp2 takes: its own for x a positive normal float, y finite and |y log2 x| below
// 125.9375 (its bound on w_hi, a float close to y log2 x); the space's pow beyond; either next to
// the bound.
enum class Exp2Path { Own, Either, SpacePow };
Exp2Path exp2_path(float x, float y) {
  if (!(x >= std::numeric_limits<float>::min() && std::isfinite(x) && std::isfinite(y))) return Exp2Path::SpacePow;
  const double w = std::abs(static_cast<double>(y) * std::log2(static_cast<double>(x)));
  return w < 125.93 ? Exp2Path::Own : w < 125.94 ? Exp2Path::Either : Exp2Path::SpacePow;
}
}  // namespace

// pow_exp2's logarithm computed on the space equals the host's, bit for bit, over every range of
// the power's tests: on a GPU that is the proof that the compiler kept every exact pair (nvcc
// fuses a product into the sum that consumes it unless told not to).
TYPED_TEST(MatrixTest, Exp2PowerLogarithmOnTheSpaceEqualsTheHostsBitForBit) {
  using Space = TypeParam;
  const auto host_table = pow_exp2::log_table(Kokkos::DefaultHostExecutionSpace());
  std::mt19937_64 random(2031);
  std::vector<float> x(1 << 14), y(x.size());
  for (const PowRange& range : kPowRanges) {
    fill_pow_operands(range, random, x, y);
    x[0] = 0.0f, x[1] = -2.0f, x[2] = std::numeric_limits<float>::infinity(), x[3] = std::numeric_limits<float>::denorm_min();
    const auto on_space = exp2_logarithms_on<Space>(x);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const pow_exp2::Logarithm l = pow_exp2::log2_parts(host_table.data(), x[i]);
      ASSERT_EQ(on_space[i][3] != 0.0f, l.special) << range.name << ": x = " << x[i];
      if (l.special) continue;
      ASSERT_TRUE(same_bits(on_space[i][0], l.h) && same_bits(on_space[i][1], l.lo_big) &&
                  same_bits(on_space[i][2], l.lo_rest))
          << range.name << ": log2 of " << x[i] << " on the space " << on_space[i][0] << " + " << on_space[i][1]
          << " + " << on_space[i][2] << ", on the host " << l.h << " + " << l.lo_big << " + " << l.lo_rest;
    }
  }
}

// pow_exp2's x ** y on the space against double-precision pow: within 2.5 ulp on devices (their
// exp2f: CUDA's within 2 ulp, HIP's 1, plus the final rounding) and 1.5 on the host (a dropped
// w_lo term alone costs up to 5 ulp at |w| = 126); outside its fast path the space's own pow,
// bit for bit (elementwise_strided's result on the same operands).
TYPED_TEST(MatrixTest, Exp2PowerWithinItsBoundOfDoublePrecisionPow) {
  using Space = TypeParam;
  const double bound = is_host_space<Space>() ? 1.5 : 2.5;
  const auto table = pow_exp2::log_table(Space());
  matrix::Params p;
  p.op = matrix::Operation::Power;
  p.rows = 1;
  const std::size_t n = 1 << 14;
  matrix::Elementwise<float, Space> k(p, "elementwise", n);
  std::mt19937_64 random(2032);
  std::vector<float> x(n), y(n);
  const float specials[] = {0.0f, -0.0f, -2.0f, 1.0f, std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min(), 1e30f};
  for (const PowRange& range : kPowRanges) {
    fill_pow_operands(range, random, x, y);
    for (std::size_t i = 0; i < std::size(specials); ++i) x[7 * i] = specials[i], y[11 * i + 1] = specials[i];
    for (std::size_t i = 0; i < n; ++i) k.x().host(0, i) = x[i], k.y().host(0, i) = y[i];
    k.x().copy_to_device();
    k.y().copy_to_device();
    matrix::elementwise_strided<4>(Space(), p.op, k.x().device, k.y().device, k.z().device);
    k.z().copy_to_host();
    const std::vector<float> standard(k.z().host.data(), k.z().host.data() + n);
    matrix::elementwise_exp2<4>(Space(), k.x().device, k.y().device, k.z().device, table);
    k.z().copy_to_host();
    for (std::size_t i = 0; i < n; ++i) {
      const float z = k.z().host(0, i);
      const Exp2Path path = exp2_path(x[i], y[i]);
      std::string where;
      const bool within = path != Exp2Path::SpacePow && pow_error_ulps(x[i], y[i], z, where) <= bound;
      const bool as_space = same_bits(z, standard[i]) || (std::isnan(z) && std::isnan(standard[i]));
      if (path == Exp2Path::Own) ASSERT_TRUE(within) << range.name << ": " << where << ", over " << bound << " ulp";
      if (path == Exp2Path::SpacePow)
        ASSERT_TRUE(as_space) << range.name << ": pow(" << x[i] << ", " << y[i] << ") is " << z << ", the space's pow "
                              << standard[i];
      if (path == Exp2Path::Either) ASSERT_TRUE(within || as_space) << range.name << ": " << where;
    }
  }
}

TYPED_TEST(MatrixTest, GemmKnownSmallProductWithAlphaAndBeta) {
  using Space = TypeParam;
  // [1 2 3; 4 5 6] * [7 8; 9 10; 11 12] = [58 64; 139 154]; C = 2 * that - [1 1; 1 1].
  matrix::Params p;
  p.m = 2;
  p.n = 2;
  p.k = 3;
  p.alpha = 2;
  p.beta = -1;
  for (const std::string& variant : kGemmVariants) {
    matrix::Gemm<double, Space> k(p, variant, 0);
    for (int i = 0; i < 2; ++i)
      for (int l = 0; l < 3; ++l) k.a().host(i, l) = 1 + 3 * i + l;
    for (int l = 0; l < 3; ++l)
      for (int j = 0; j < 2; ++j) k.b().host(l, j) = 7 + 2 * l + j;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) k.c0().host(i, j) = 1;
    run_once(k);
    const double expected[2][2] = {{115, 127}, {277, 307}};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) EXPECT_DOUBLE_EQ(k.c().host(i, j), expected[i][j]) << variant << " " << i << "," << j;
  }
}

TYPED_TEST(MatrixTest, EveryVariantVerifiesUnderEveryPolicy) {
  using Space = TypeParam;
  for (MirrorPolicy policy : policies_for<Space>()) {
    for (matrix::Operation op : {matrix::Operation::Power, matrix::Operation::Multiply}) {
      matrix::Params p;
      p.op = op;
      matrix::Elementwise<float, Space> k(p, "elementwise", 1001);
      const Measurement m = measure(k, Space(), matrix_spec(policy));
      EXPECT_TRUE(m.verification.checked);
      EXPECT_TRUE(m.verification.passed) << to_string(policy) << ": " << m.verification.detail;
    }
    for (const std::string& variant : kGemmVariants) {
      matrix::Gemm<float, Space> k(rectangular(), variant, 0);
      const Measurement m = measure(k, Space(), matrix_spec(policy));
      EXPECT_TRUE(m.verification.passed) << variant << " " << to_string(policy) << ": " << m.verification.detail;
      matrix::Gemm<double, Space> square(matrix::Params{}, variant, 70);
      const Measurement ms = measure(square, Space(), matrix_spec(policy));
      EXPECT_TRUE(ms.verification.passed) << variant << " " << to_string(policy) << ": " << ms.verification.detail;
    }
  }
}

// The wide host tiles (and a larger shape) on a product that is no multiple of them: one partial
// tile in each direction, a last k slice shorter than the others, every edge of the packing at
// a large depth, with beta (C0 scaled into the first slice) and without (C0 not read).
TYPED_TEST(MatrixTest, TiledGemmLargeTilesVerifyOnPartialTiles) {
  using Space = TypeParam;
  if constexpr (!is_host_space<Space>()) {
    GTEST_SKIP() << "the large tiles are the host's (1.5 MiB of scratch per team)";
  } else {
    for (const matrix::TileShape tiles : {matrix::TileShape{128, 512, 128}, matrix::TileShape{256, 512, 256}}) {
      for (const double beta : {0.5, 0.0}) {
        matrix::Params p = rectangular(300, 530, 270, tiles);
        p.beta = beta;
        const std::string shape = std::to_string(tiles.m) + "x" + std::to_string(tiles.n) + "x" +
                                  std::to_string(tiles.k) + " beta " + std::to_string(beta) + ": ";
        matrix::Gemm<double, Space> d(p, "gemm-tiled", 0);
        const Measurement md = measure(d, Space(), matrix_spec(MirrorPolicy::AllResident, 1));
        EXPECT_TRUE(md.verification.passed) << shape << md.verification.detail;
        matrix::Gemm<float, Space> f(p, "gemm-tiled", 0);
        const Measurement mf = measure(f, Space(), matrix_spec(MirrorPolicy::AllResident, 1));
        EXPECT_TRUE(mf.verification.passed) << shape << mf.verification.detail;
      }
    }
  }
}

// Runs of row tiles (the host packs B once per run and k slice): 3, 5 and 7 row tiles in one
// column, so that on most thread counts the last run is shorter than the others (on 2 threads
// runs of 2 and of 3); every product verifies and equals gemm-naive's.
TYPED_TEST(MatrixTest, TiledGemmRunsOfRowTilesVerify) {
  using Space = TypeParam;
  for (const std::size_t tiles_m : {3, 5, 7}) {
    const matrix::Params p = rectangular(32 * tiles_m - 5, 29, 53);
    matrix::Gemm<double, Space> tiled(p, "gemm-tiled", 0), naive(p, "gemm-naive", 0);
    const Measurement mt = measure(tiled, Space(), matrix_spec(MirrorPolicy::AllResident, 1));
    const Measurement mn = measure(naive, Space(), matrix_spec(MirrorPolicy::AllResident, 1));
    ASSERT_TRUE(mt.verification.passed) << tiles_m << " row tiles: " << mt.verification.detail;
    ASSERT_TRUE(mn.verification.passed) << mn.verification.detail;
    const std::vector<double> c = values(tiled.c()), reference = values(naive.c());
    for (std::size_t e = 0; e < c.size(); ++e) ASSERT_NEAR(c[e], reference[e], 1e-12) << tiles_m << " row tiles, element " << e;
  }
}

// The resident form (gemm-tiled's on GPUs) with a GPU's register block, on any space: tiles of
// one block up to as many as the space's teams hold, on a product with partial tiles, partial
// blocks and a short last k slice, with beta and without. Every product it runs verifies and
// equals gemm-naive's; a tile with more blocks than the space's teams hold launches nothing and
// leaves C as it was. Host teams are as wide as the thread pool, so on one thread only the
// one-block tile runs; the CUDA and HIP unit tests run it through gemm-tiled's own tiles.
template <class Scalar, class Space>
void check_resident_form(const double tolerance) {
  constexpr int RM = matrix::DeviceRegisterBlock<Scalar>::rows, RN = matrix::DeviceRegisterBlock<Scalar>::cols;
  const std::string precision = sizeof(Scalar) == 4 ? "float32" : "float64";
  int ran = 0;
  for (const auto& [panels_m, panels_n] :
       std::vector<std::pair<int, int>>{{1, 1}, {2, 1}, {1, 2}, {2, 2}, {8, 4}, {64, 64}}) {
    const matrix::TileShape tiles{RM * panels_m, RN * panels_n, 10};
    for (const double beta : {0.5, 0.0}) {
      const std::string what = precision + " tile " + std::to_string(tiles.m) + "x" + std::to_string(tiles.n) +
                               "x10 beta " + std::to_string(beta) + ": ";
      matrix::Params p = rectangular(37, 29, 53, tiles);
      p.beta = beta;
      matrix::Gemm<Scalar, Space> resident(p, "gemm-tiled", 0), naive(p, "gemm-naive", 0);
      const Measurement mn = measure(naive, Space(), matrix_spec(MirrorPolicy::AllResident, 1));
      ASSERT_TRUE(mn.verification.passed) << what << mn.verification.detail;
      resident.generate_inputs(77);
      for (Transferable* f : resident.inputs()) f->copy_to_device();
      Kokkos::deep_copy(resident.c().device, Scalar(-7));
      const bool launched = matrix::gemm_tiled_resident<Scalar, RM, RN>(
          Space(), tiles, static_cast<Scalar>(p.alpha), resident.a().device, resident.b().device,
          static_cast<Scalar>(p.beta), resident.c0().device, resident.c().device);
      Kokkos::fence();
      resident.c().copy_to_host();
      const std::vector<double> c = values(resident.c()), reference = values(naive.c());
      if (!launched) {
        EXPECT_GT(panels_m * panels_n, 1) << what << "a one-block tile fits every space's teams";
        for (std::size_t e = 0; e < c.size(); ++e) ASSERT_EQ(c[e], -7.0) << what << "refused, but wrote element " << e;
        continue;
      }
      EXPECT_LT(panels_m * panels_n, 64 * 64) << what << "4096 threads in a team";
      ++ran;
      const Verification v = resident.verify(std::nullopt);
      EXPECT_TRUE(v.passed) << what << v.detail;
      for (std::size_t e = 0; e < c.size(); ++e) ASSERT_NEAR(c[e], reference[e], tolerance) << what << "element " << e;
    }
  }
  EXPECT_GE(ran, 2) << precision << ": the one-block tile ran with and without beta";
}

TYPED_TEST(MatrixTest, TiledGemmResidentFormVerifiesWhereTheTeamFits) {
  check_resident_form<double, TypeParam>(1e-12);
  check_resident_form<float, TypeParam>(1e-4);
}

// A tile that is no multiple of the register block is refused before anything is launched, and the
// message names the tile and the block.
TYPED_TEST(MatrixTest, TiledGemmResidentFormRefusesATileOffTheRegisterBlock) {
  using Space = TypeParam;
  constexpr int RM = matrix::DeviceRegisterBlock<double>::rows, RN = matrix::DeviceRegisterBlock<double>::cols;
  const matrix::TileShape tiles{RM + 2, RN, 10};
  matrix::Gemm<double, Space> k(rectangular(37, 29, 53, tiles), "gemm-tiled", 0);
  const std::string want = "gemm-tiled: tile " + std::to_string(RM + 2) + " x " + std::to_string(RN) +
                           " x 10 is not a multiple of the " + std::to_string(RM) + " x " + std::to_string(RN) +
                           " register block";
  try {
    matrix::gemm_tiled_resident<double, RM, RN>(Space(), tiles, 1.0, k.a().device, k.b().device, 0.0, k.c0().device,
                                                k.c().device);
    FAIL() << "a " << matrix::to_string(tiles) << " tile ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(e.what(), want);
  }
}

// The run length: the busiest thread's share of tiles at its minimum, then the longest run.
TEST(MatrixTiles, HostRowRunsKeepEveryThreadBusy) {
  EXPECT_EQ(matrix::host_row_run(16, 8, 2), 16);  // n = 4096, 256 x 512 tiles: one run per column
  EXPECT_EQ(matrix::host_row_run(4, 2, 2), 4);    // n = 1024: one column per thread
  EXPECT_EQ(matrix::host_row_run(4, 2, 3), 1);    // 3 threads: 8 single tiles, 3 each at most
  EXPECT_EQ(matrix::host_row_run(3, 1, 2), 2);    // runs of 2 and 1
  EXPECT_EQ(matrix::host_row_run(5, 3, 1), 5);    // one thread: whole columns
  EXPECT_EQ(matrix::host_row_run(2, 1, 64), 1);   // more threads than tiles
}

TYPED_TEST(MatrixTest, GemmVariantsAgreeAndRepeatedComputeLeavesInputsUnchanged) {
  using Space = TypeParam;
  std::vector<double> first;
  for (const std::string& variant : kGemmVariants) {
    matrix::Gemm<double, Space> k(rectangular(), variant, 0);
    const Measurement m = measure(k, Space(), matrix_spec(MirrorPolicy::AllResident, 3));
    ASSERT_TRUE(m.verification.passed) << variant << ": " << m.verification.detail;
    const std::vector<double> c = values(k.c());
    if (first.empty()) {
      first = c;
      continue;
    }
    for (std::size_t e = 0; e < c.size(); ++e) ASSERT_NEAR(c[e], first[e], 1e-12) << variant << " element " << e;
  }
}

TYPED_TEST(MatrixTest, TiledGemmDefaultTilesAndOverrides) {
  using Space = TypeParam;
  const int threads = static_cast<int>(Space().concurrency());
  const matrix::TileShape d = matrix::default_tiles<double, Space>(8, 8, threads);
  matrix::Gemm<double, Space> defaults(matrix::Params{}, "gemm-tiled", 8);
  EXPECT_EQ(defaults.tiles().m, d.m);
  EXPECT_EQ(defaults.tiles().k, d.k);
  matrix::Params p;
  p.tile_k = 3;
  matrix::Gemm<double, Space> custom(p, "gemm-tiled", 8);
  EXPECT_EQ(custom.tiles().k, 3);
  EXPECT_EQ(custom.tiles().n, d.n);
  // Tile multiples of every register block.
  EXPECT_EQ(d.m % matrix::kTileMultiple, 0);
  EXPECT_EQ(d.n % matrix::kTileMultiple, 0);
  // The float32 default is the one its problems take; on a GPU, the same scratch bytes per team
  // as float64's (twice the k depth), on a host the same shape.
  const matrix::TileShape f = matrix::default_tiles<float, Space>(8, 8, threads);
  matrix::Gemm<float, Space> single(matrix::Params{}, "gemm-tiled", 8);
  EXPECT_EQ(single.tiles().k, f.k);
  EXPECT_EQ(single.tiles().m, f.m);
  if (is_host_space<Space>()) {
    EXPECT_EQ(f.k, d.k);
    // The wide host tiles only where the L2 holds their slices and the product gives every
    // thread two of them: never for a 1024 x 1024 product on 64 threads (16 tiles).
    const matrix::TileShape crowded = matrix::default_tiles<double, Space>(1024, 1024, 64);
    EXPECT_EQ(crowded.m, 128);
    EXPECT_EQ(crowded.n, 256);
    EXPECT_EQ(crowded.k, 128);
    const bool wide = matrix::host_l2_bytes() >= matrix::kWideTileL2Bytes;
    const matrix::TileShape big = matrix::default_tiles<double, Space>(4096, 4096, 2);
    EXPECT_EQ(big.n, wide ? 512 : 256);
    // Wide tiles hold 1 KiB of each packed row: twice float64's depth in float32.
    const matrix::TileShape big32 = matrix::default_tiles<float, Space>(4096, 4096, 2);
    EXPECT_EQ(big32.k, wide ? 256 : 128);
    EXPECT_EQ(big32.n, big.n);
  } else {
    EXPECT_EQ((f.m + f.n) * f.k * sizeof(float), 24u * 1024);
    EXPECT_EQ((d.m + d.n) * d.k * sizeof(double), 24u * 1024);
    // float32 takes 64 x 128 x 32 (the same 24 KiB) once the product has a tile for every 1024
    // resident threads, and only then; float64 keeps its tile.
    const std::size_t wide = static_cast<std::size_t>(threads) / 1024 * 128 + 128;
    const matrix::TileShape big32 = matrix::default_tiles<float, Space>(64, wide, threads);
    EXPECT_EQ(big32.m, 64);
    EXPECT_EQ(big32.n, 128);
    EXPECT_EQ((big32.m + big32.n) * big32.k * sizeof(float), 24u * 1024);
    if (threads >= 2048) {
      EXPECT_EQ((matrix::default_tiles<float, Space>(64, 128, threads).m), f.m);
      EXPECT_EQ(f.m, 32);
    }
    EXPECT_EQ((matrix::default_tiles<double, Space>(4096, 4096, threads).n), d.n);
  }
}

namespace {
// Both problems generate the same inputs on the device as on the host; `fields` lists a
// kernel's inputs as (host-generated, device-generated) pairs.
template <class Kernel, class Space, class Fields>
void expect_device_generation_matches_host(const std::string& variant, Fields fields) {
  Kernel on_host(rectangular(), variant, 40), on_device(rectangular(), variant, 40);
  MeasurementSpec spec = matrix_spec(MirrorPolicy::InputsResident, 1);
  measure(on_host, Space(), spec);
  spec.generate = Generation::Device;
  const Measurement md = measure(on_device, Space(), spec);
  EXPECT_TRUE(md.verification.passed) << md.verification.detail;
  EXPECT_EQ(md.bytes_one_time, 0u);
  for (auto [h, d] : fields(on_host, on_device)) EXPECT_EQ(values(*h), values(*d)) << variant << " " << h->name();
}
}  // namespace

TYPED_TEST(MatrixTest, InputsGeneratedOnTheDeviceEqualHostGeneratedOnes) {
  using Space = TypeParam;
  using Elementwise = matrix::Elementwise<float, Space>;
  using Gemm = matrix::Gemm<float, Space>;
  expect_device_generation_matches_host<Elementwise, Space>("elementwise", [](Elementwise& h, Elementwise& d) {
    return std::vector{std::pair{&h.x(), &d.x()}, std::pair{&h.y(), &d.y()}};
  });
  expect_device_generation_matches_host<Gemm, Space>("gemm-tiled", [](Gemm& h, Gemm& d) {
    return std::vector{std::pair{&h.a(), &d.a()}, std::pair{&h.b(), &d.b()}, std::pair{&h.c0(), &d.c0()}};
  });
  // Elementwise inputs are positive, as pow needs; GEMM inputs are signed.
  matrix::Elementwise<double, Space> e(matrix::Params{}, "elementwise", 500);
  e.generate_inputs(3);
  for (double v : values(e.x())) ASSERT_TRUE(v > 0 && v <= 1) << v;
}

TYPED_TEST(MatrixTest, CorruptedResultsFailVerificationAndAreNamed) {
  using Space = TypeParam;
  matrix::Elementwise<double, Space> e(matrix::Params{}, "elementwise", 50);
  e.generate_inputs(5);
  run_once(e);
  ASSERT_TRUE(e.verify(std::nullopt).passed);
  e.z().host(1, 7) *= 1 + 1e-9;
  Verification v = e.verify(std::nullopt);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("z(1,7)"), std::string::npos) << v.detail;

  for (const std::string& variant : kGemmVariants) {
    matrix::Gemm<float, Space> g(rectangular(), variant, 0);
    g.generate_inputs(5);
    run_once(g);
    ASSERT_TRUE(g.verify(std::nullopt).passed) << variant;
    g.c().host(30, 4) += 1e-2f;
    v = g.verify(std::nullopt);
    EXPECT_FALSE(v.passed) << variant;
    EXPECT_NE(v.detail.find("C(30,4)"), std::string::npos) << v.detail;
  }
}

TYPED_TEST(MatrixTest, KokkosKernelsReachesTheVendorBlasOnTheHost) {
  using Space = TypeParam;
  MINIAPP_SKIP_IF_UNAVAILABLE("matrix", "gemm-kokkos-kernels");
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
  if (!is_host_space<Space>()) GTEST_SKIP() << "the host BLAS serves host spaces only";
  // Kokkos Kernels names the region of a vendor call "KokkosBlas::gemm[TPL_...]".
  static std::vector<std::string> regions;
  regions.clear();
  Kokkos::Tools::Experimental::set_push_region_callback([](const char* name) { regions.emplace_back(name); });
  for (bool use_double : {true, false}) {
    if (use_double) {
      matrix::Gemm<double, Space> k(matrix::Params{}, "gemm-kokkos-kernels", 16);
      run_once(k);
    } else {
      matrix::Gemm<float, Space> k(matrix::Params{}, "gemm-kokkos-kernels", 16);
      run_once(k);
    }
  }
  Kokkos::Tools::Experimental::set_push_region_callback(nullptr);
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_NE(regions[0].find("TPL_BLAS"), std::string::npos) << regions[0];
  EXPECT_NE(regions[1].find("TPL_BLAS"), std::string::npos) << regions[1];
#elif MINIAPP_EXPECT_VENDOR_BLAS
  FAIL() << "this build expects Kokkos Kernels with the vendor BLAS (scripts/build.sh built it so), but "
            "KOKKOSKERNELS_ENABLE_TPL_BLAS is not defined";
#else
  GTEST_SKIP() << "Kokkos Kernels was built without a vendor BLAS";
#endif
}

TYPED_TEST(MatrixTest, WorkEstimates) {
  using Space = TypeParam;
  matrix::Params p;
  p.m = 10;
  p.n = 20;
  p.k = 30;
  matrix::Gemm<double, Space> g(p, "gemm-naive", 0);
  EXPECT_DOUBLE_EQ(g.work().flops, 2.0 * 10 * 20 * 30);
  EXPECT_DOUBLE_EQ(g.work().bytes_read, (10.0 * 30 + 30.0 * 20) * 8);
  EXPECT_DOUBLE_EQ(g.work().bytes_written, 10.0 * 20 * 8);
  EXPECT_EQ(g.inputs().size(), 2u) << "C0 is an input only when beta is not 0";
  p.beta = 1;
  matrix::Gemm<double, Space> with_beta(p, "gemm-naive", 0);
  EXPECT_EQ(with_beta.inputs().size(), 3u);
  matrix::Elementwise<float, Space> e(matrix::Params{}, "elementwise", 100);
  EXPECT_DOUBLE_EQ(e.work().flops, 300.0);
  EXPECT_DOUBLE_EQ(e.work().bytes_read, 600.0 * 4);
}

TEST(MatrixReference, LargeProductsAreCheckedOnAnEvenSampleOfRows) {
  const auto rows = matrix::gemm_reference_rows({100000, 4096, 4096});
  ASSERT_EQ(rows.size(), matrix::kMinSampledRows);
  EXPECT_EQ(rows.front(), 0u);
  EXPECT_EQ(rows.back(), 99999u);
  EXPECT_EQ(matrix::gemm_reference_rows({300, 300, 300}).size(), 300u);
}

TEST(MatrixDeck, KeysAreParsedAndBadOnesRejected) {
  const DeckResult ok = load_deck_text(
      "cases:\n  - workload: matrix\n    variants: all\n    sizes: 64\n    op: multiply\n    rows: 5\n"
      "    m: 10\n    alpha: -2\n    beta: 0.5\n    tile_m: 32\n    tile_k: 7\n",
      "deck.yaml");
  ASSERT_TRUE(ok.deck) << format(ok.diagnostics.all().front());
  const auto& p = std::any_cast<const matrix::Params&>(ok.deck->cases.at(0).params);
  EXPECT_EQ(p.op, matrix::Operation::Multiply);
  EXPECT_EQ(p.rows, 5);
  EXPECT_EQ(p.m, std::optional<std::size_t>(10));
  EXPECT_FALSE(p.n.has_value());
  EXPECT_DOUBLE_EQ(p.alpha, -2);
  EXPECT_DOUBLE_EQ(p.beta, 0.5);
  EXPECT_EQ(p.tile_m, 32);
  EXPECT_EQ(p.tile_k, 7);
  EXPECT_EQ(matrix::gemm_shape(p, 64).k, 64u);

  for (const char* bad : {"op: square", "rows: 0", "m: 0", "tile_m: 12", "tile_n: 4", "tile_k: 0", "beta: big"}) {
    const DeckResult r =
        load_deck_text(std::string("cases:\n  - workload: matrix\n    sizes: 64\n    ") + bad + "\n", "deck.yaml");
    EXPECT_FALSE(r.deck) << bad;
    ASSERT_FALSE(r.diagnostics.empty()) << bad;
    const std::string key = std::string(bad).substr(0, std::string(bad).find(':'));
    EXPECT_EQ(r.diagnostics.all().front().path, "cases[0]." + key) << bad;
    EXPECT_EQ(r.diagnostics.all().front().line, 4) << bad;
  }
}
