#pragma once
// The tables of the host's AVX-512 register-table float power (host_powf_avx512.hpp; the AVX2 one,
// host_powf_avx2.hpp, shares the split and index and chooses its own tables):
// x = 2^k z with z in [0.699, 1.398), split at the bits of 0.69921875 so that x near 1 keeps
// k = 0, and z in one of 16 subintervals read from the top 4 bits of its mantissa past the split.
// For each subinterval 1/c of its centre c, rounded to a float (exactly 1 in the one holding 1:
// no cancellation near x = 1; as a float, z (1/c) is exact in double), and -log2(1/c) for that
// rounded 1/c; and 2^(j/16) for j in [0, 16).

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace miniapp::simd::powf_tables {

inline constexpr std::int32_t kSplit = 0x3f330000;  // the bits of 0.69921875, where z's range starts
inline constexpr int kIndexShift = 23 - 4;            // 16 subintervals: the top 4 bits of z - split

struct Values {
  float inverse[16];  // 1/c, a float
  double logs[16], exps[16];
};

inline Values values() {
  Values v;
  for (int i = 0; i < 16; ++i) {
    float low, high;
    const std::int32_t low_bits = kSplit + (i << kIndexShift), high_bits = low_bits + (1 << kIndexShift);
    std::memcpy(&low, &low_bits, sizeof(low));
    std::memcpy(&high, &high_bits, sizeof(high));
    const bool holds_one = low <= 1.0f && 1.0f < high;
    const double centre = (static_cast<double>(low) + static_cast<double>(high)) / 2;
    v.inverse[i] = holds_one ? 1.0f : static_cast<float>(1.0 / centre);
    v.logs[i] = static_cast<double>(-std::log2(static_cast<long double>(v.inverse[i])));
    v.exps[i] = static_cast<double>(std::exp2(static_cast<long double>(i) / 16));
  }
  return v;
}

// The two polynomials, for any vector of doubles with an fma below.
#if defined(__AVX512F__)
inline __m512d fma(__m512d a, __m512d b, __m512d c) { return _mm512_fmadd_pd(a, b, c); }
#endif
template <class V>
inline V splat(double c) {
  return V{} + c;
}

// log2(1 + r) / r = (1/ln 2) (1 - r/2 + r^2/3 - ... - r^7/8): with |r| < 0.032, below 4e-12
// relative.
template <class V>
inline V log2_1p_over_r(V r) {
  constexpr double inv_ln2 = 1.4426950408889634074;  // 1/ln 2
  V p = splat<V>(-inv_ln2 / 8);
  p = fma(p, r, splat<V>(inv_ln2 / 7));
  p = fma(p, r, splat<V>(-inv_ln2 / 6));
  p = fma(p, r, splat<V>(inv_ln2 / 5));
  p = fma(p, r, splat<V>(-inv_ln2 / 4));
  p = fma(p, r, splat<V>(inv_ln2 / 3));
  p = fma(p, r, splat<V>(-inv_ln2 / 2));
  return fma(p, r, splat<V>(inv_ln2));
}

// 2^f = e^(f ln 2) through the f^5 term: with |f| <= 1/32, below 2e-13.
template <class V>
inline V exp2_small(V f) {
  constexpr double ln2 = 0.69314718055994530942;
  V q = splat<V>(ln2 * ln2 * ln2 * ln2 * ln2 / 120);
  q = fma(q, f, splat<V>(ln2 * ln2 * ln2 * ln2 / 24));
  q = fma(q, f, splat<V>(ln2 * ln2 * ln2 / 6));
  q = fma(q, f, splat<V>(ln2 * ln2 / 2));
  q = fma(q, f, splat<V>(ln2));
  return fma(q, f, splat<V>(1.0));
}

// w rounded to sixteenths: adding 1.5 * 2^48 leaves round(16 w) in the low bits of the sum.
inline constexpr double kSixteenthsShifter = 0x1.8p48;

}  // namespace miniapp::simd::powf_tables
