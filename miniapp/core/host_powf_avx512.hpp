#pragma once
// float pow on AVX-512, 16 lanes at a time, with its tables held in registers: pow(x, y) =
// 2^(y log2 x), both halves in double precision, so the float result is the correctly rounded
// value of a double whose relative error is below 1e-10 (under 0.51 ulp of the float).
//
// libmvec's powf (_ZGVeN16vv_powf) reads its log and exp tables with four gathers per 16
// elements; on a Xeon of the Sapphire Rapids class those gathers took most of its time and kept
// x ** y at a quarter of the copy bandwidth. Here the two 16-entry tables are pairs of zmm
// registers read with vpermt2pd (one instruction per 8 lanes).
//
// log2 x: x = 2^k z with z in [0.699, 1.398) (the exponent split at 0x3f330000, so x near 1 keeps
// k = 0), z in one of 16 subintervals with centre c; r = z/c - 1 with |r| < 0.032 (exactly
// z - 1 in the subinterval holding 1, where 1/c is taken as 1: no cancellation near x = 1);
// log2 x = k - log2(1/c) + log2(1 + r), the last a Taylor polynomial through r^7 (truncation
// below 4e-12 relative). 2^w: w = n + j/16 + f, |f| <= 1/32; 2^(j/16) from the second table,
// 2^f a polynomial through f^5 (below 2e-13), 2^n by vscalefpd.
//
// Lanes outside that fast path (x zero, negative, subnormal, infinite or NaN; y infinite or NaN;
// |y log2 x| >= 126, where the float result would overflow or be subnormal) are recomputed by
// the caller's general pow: `special` marks them.

#if defined(__AVX512F__)
#include "miniapp/core/host_powf_tables.hpp"

#include <immintrin.h>

// GCC 12 warns that the intrinsics' own placeholder operands are, or may be, used uninitialized
// wherever they inline (GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace miniapp::simd::powf16 {

struct Tables {
  __m512d inverse_centre[2];  // 1/c of the 16 subintervals of z, as two registers of 8
  __m512d log_centre[2];      // -log2(1/c), exactly for the rounded 1/c above
  __m512d exp2_sixteenths[2];  // 2^(j/16)
};

inline Tables make_tables() {
  const powf_tables::Values v = powf_tables::values();
  Tables t;
  for (int h = 0; h < 2; ++h) {
    t.inverse_centre[h] = _mm512_cvtps_pd(_mm256_loadu_ps(v.inverse + 8 * h));
    t.log_centre[h] = _mm512_loadu_pd(v.logs + 8 * h);
    t.exp2_sixteenths[h] = _mm512_loadu_pd(v.exps + 8 * h);
  }
  return t;
}

// Eight lanes: z in [0.699, 1.398), k the exponent, index the subinterval (bits 3:0 are read),
// y the exponent of the power. Returns the double 2^(y log2 x) and marks |y log2 x| >= 126.
inline __m512d power8(const Tables& t, __m512d z, __m512d k, __m512i index, __m512d y, __mmask8& out_of_range) {
  const __m512d inverse = _mm512_permutex2var_pd(t.inverse_centre[0], index, t.inverse_centre[1]);
  const __m512d log_c = _mm512_permutex2var_pd(t.log_centre[0], index, t.log_centre[1]);
  const __m512d r = _mm512_fmsub_pd(z, inverse, _mm512_set1_pd(1.0));
  const __m512d log2x = _mm512_fmadd_pd(r, powf_tables::log2_1p_over_r(r), _mm512_add_pd(k, log_c));
  const __m512d w = _mm512_mul_pd(y, log2x);
  out_of_range = _mm512_cmp_pd_mask(_mm512_abs_pd(w), _mm512_set1_pd(126.0), _CMP_NLT_UQ);
  const __m512d shifter = _mm512_set1_pd(powf_tables::kSixteenthsShifter);
  const __m512d shifted = _mm512_add_pd(w, shifter);
  const __m512d sixteenths = _mm512_sub_pd(shifted, shifter);
  const __m512d f = _mm512_sub_pd(w, sixteenths);
  const __m512d table = _mm512_permutex2var_pd(t.exp2_sixteenths[0], _mm512_castpd_si512(shifted), t.exp2_sixteenths[1]);
  // vscalefpd multiplies by 2^floor(sixteenths): the whole part n, with j/16 in the table
  return _mm512_scalef_pd(_mm512_mul_pd(table, powf_tables::exp2_small(f)), sixteenths);
}

// 16 lanes of pow(x, y); `special` marks the lanes the fast path does not cover (their values in
// the result are meaningless).
inline __m512 power16(const Tables& t, __m512 x, __m512 y, __mmask16& special) {
  const __m512i ix = _mm512_castps_si512(x), iy = _mm512_castps_si512(y);
  const __m512i offset = _mm512_sub_epi32(ix, _mm512_set1_epi32(powf_tables::kSplit));
  const __m512i k = _mm512_srai_epi32(offset, 23);
  const __m512i index = _mm512_srli_epi32(offset, powf_tables::kIndexShift);
  const __m512i iz = _mm512_sub_epi32(ix, _mm512_slli_epi32(k, 23));
  // x not a positive normal finite float: x - 2^-126 as unsigned wraps for zero, negatives and
  // subnormals, and lands at or above 0x7f000000 for infinities and NaN
  special = _mm512_cmpge_epu32_mask(_mm512_sub_epi32(ix, _mm512_set1_epi32(0x00800000)), _mm512_set1_epi32(0x7f000000));
  const __m512i exponent_bits = _mm512_set1_epi32(0x7f800000);
  special |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(iy, exponent_bits), exponent_bits);
  __m256 half[2];
  for (int h = 0; h < 2; ++h) {
    const __m256i z32 = h == 0 ? _mm512_castsi512_si256(iz) : _mm512_extracti64x4_epi64(iz, 1);
    const __m256i k32 = h == 0 ? _mm512_castsi512_si256(k) : _mm512_extracti64x4_epi64(k, 1);
    const __m256i index32 = h == 0 ? _mm512_castsi512_si256(index) : _mm512_extracti64x4_epi64(index, 1);
    const __m256 y32 = h == 0 ? _mm512_castps512_ps256(y) : _mm256_castsi256_ps(_mm512_extracti64x4_epi64(iy, 1));
    __mmask8 out_of_range;
    const __m512d p = power8(t, _mm512_cvtps_pd(_mm256_castsi256_ps(z32)), _mm512_cvtepi32_pd(k32),
                             _mm512_cvtepu32_epi64(index32), _mm512_cvtps_pd(y32), out_of_range);
    special |= static_cast<__mmask16>(static_cast<unsigned>(out_of_range) << (8 * h));
    half[h] = _mm512_cvtpd_ps(p);
  }
  return _mm512_castpd_ps(
      _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(half[0])), _mm256_castps_pd(half[1]), 1));
}

}  // namespace miniapp::simd::powf16

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif
