// The float power's tables (miniapp/core/host_powf_float.hpp): the constants are what the search
// described there gives, and they hold what the power's error budget assumes.
#include "miniapp/core/host_simd.hpp"
#if MINIAPP_HOST_SIMD
#include "miniapp/core/host_powf_float.hpp"
#endif

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#if MINIAPP_HOST_SIMD && defined(__AVX2__) && defined(__FMA__)
namespace {
using namespace miniapp::simd;

constexpr long double kLn2 = 0.693147180559945309417232121458176568L;

float float_of_bits(std::int32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
std::int32_t bits_of_float(float f) {
  std::int32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

// The tables as make_tables() loads them into AVX2 registers (the AVX-512 ones hold the same
// values: the test of host_powf_float.hpp's two widths compares their results bit for bit).
struct Values {
  float inverse[16], high[16], low[16], exp_high[8], exp_low_ratio[8], exp_ln2[8];
};
void store16(float* to, const powff::Avx2::Table16& table) {
  _mm256_storeu_ps(to, table.low);
  _mm256_storeu_ps(to + 8, table.high);
}
Values loaded() {
  const powff::Tables<powff::Avx2> t = powff::make_tables<powff::Avx2>();
  Values v;
  store16(v.inverse, t.inverse);
  store16(v.high, t.log_high);
  store16(v.low, t.log_low);
  _mm256_storeu_ps(v.exp_high, t.exp_high);
  _mm256_storeu_ps(v.exp_low_ratio, t.exp_low_ratio);
  _mm256_storeu_ps(v.exp_ln2, t.exp_ln2);
  return v;
}

// The search of the header's comment, subinterval i: 1 in the one holding 1, elsewhere the float
// within 4096 ulps of 2 / (low + high) whose -log2 lies nearest a multiple of 2^-16 (scored in
// double: its error, 2^-53, is far below the scores, about 2^-30).
float searched_inverse(int i) {
  using powff::kIndexShift;
  using powff::kSplit;
  const std::int32_t low_bits = kSplit + (i << kIndexShift), high_bits = low_bits + (1 << kIndexShift);
  const float low = float_of_bits(low_bits), high = float_of_bits(high_bits);
  if (low <= 1.0f && 1.0f < high) return 1.0f;
  const std::int32_t start = bits_of_float(static_cast<float>(2.0 / (double(low) + double(high))));
  double best = HUGE_VAL;
  float chosen = 0.0f;
  for (int d = -4096; d <= 4096; ++d) {
    const double t = -std::log2(double(float_of_bits(start + d)));
    const double distance = std::abs(t - std::nearbyint(t * 65536.0) / 65536.0);
    if (distance < best) best = distance, chosen = float_of_bits(start + d);
  }
  return chosen;
}

// ... and j: the float within 64 ulps of 2^(j/8) whose product with ln2 lies nearest a float,
// relative to itself.
float searched_exp_high(int j) {
  const std::int32_t start = bits_of_float(static_cast<float>(std::exp2(static_cast<long double>(j) / 8)));
  long double best = HUGE_VALL;
  float chosen = 0.0f;
  for (int d = -64; d <= 64; ++d) {
    const long double candidate = float_of_bits(start + d), product = candidate * kLn2;
    const long double distance = std::abs(product - static_cast<float>(product)) / candidate;
    if (distance < best) best = distance, chosen = float_of_bits(start + d);
  }
  return chosen;
}
}  // namespace
#endif

// The constants are the search's results, and every other entry is computed from them as the
// header says (in long double, each rounded once to float).
TEST(MatrixHostPower, RegisterTablePowerTablesAreWhatTheirSearchGives) {
#if MINIAPP_HOST_SIMD && defined(__AVX2__) && defined(__FMA__)
  const Values v = loaded();
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(v.inverse[i], searched_inverse(i)) << "subinterval " << i;
    const long double t = -std::log2(static_cast<long double>(v.inverse[i]));
    const long double t_high = std::nearbyint(t * 65536.0L) / 65536.0L;
    EXPECT_EQ(v.high[i], static_cast<float>(t_high)) << "subinterval " << i;
    EXPECT_EQ(v.low[i], static_cast<float>(t - t_high)) << "subinterval " << i;
  }
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(v.exp_high[j], searched_exp_high(j)) << "j " << j;
    const long double two_to_j8 = std::exp2(static_cast<long double>(j) / 8), t = v.exp_high[j];
    EXPECT_EQ(v.exp_ln2[j], static_cast<float>(t * kLn2)) << "j " << j;
    EXPECT_EQ(v.exp_low_ratio[j], static_cast<float>((two_to_j8 - t) / t)) << "j " << j;
  }
#else
  GTEST_SKIP() << "this build targets no AVX2 with FMA (or is a CUDA/HIP build)";
#endif
}

// What the float power's error budget stands on (host_powf_float.hpp): each -log2(1/c) is a multiple
// of 2^-16 (so k + high is exact in float) plus a low part below 2^-28, the pair equal to
// -log2(1/c) to double precision; each T_j near 2^(j/8) with T_j ln2 within 2^-31.4 T_j of its
// float and T_j (1 + t_j) equal to 2^(j/8) but for t_j's rounding (2^-40: the budget is 2^-30).
TEST(MatrixHostPower, RegisterTablePowerTablesHoldWhatItsErrorBoundAssumes) {
#if MINIAPP_HOST_SIMD && defined(__AVX2__) && defined(__FMA__)
  const Values v = loaded();
  for (int i = 0; i < 16; ++i) {
    const long double exact = -std::log2(static_cast<long double>(v.inverse[i]));
    EXPECT_EQ(std::ldexp(v.high[i], 16), std::nearbyint(std::ldexp(v.high[i], 16))) << "subinterval " << i;
    EXPECT_LE(std::abs(v.low[i]), std::ldexp(1.0f, -28)) << "subinterval " << i;
    EXPECT_LE(std::abs(static_cast<double>(static_cast<long double>(v.high[i]) + v.low[i] - exact)), 0x1p-52)
        << "subinterval " << i;
  }
  for (int j = 0; j < 8; ++j) {
    const long double product = static_cast<long double>(v.exp_high[j]) * kLn2;
    EXPECT_LE(static_cast<double>(std::abs(product - v.exp_ln2[j]) / v.exp_high[j]), std::ldexp(1.0, -31)) << "j " << j;
    const long double two_to_j8 = std::exp2(static_cast<long double>(j) / 8);
    const long double product_with_ratio = v.exp_high[j] * (1 + static_cast<long double>(v.exp_low_ratio[j]));
    EXPECT_LE(static_cast<double>(std::abs(product_with_ratio - two_to_j8) / two_to_j8), 0x1p-40) << "j " << j;
  }
#else
  GTEST_SKIP() << "this build targets no AVX2 with FMA (or is a CUDA/HIP build)";
#endif
}

