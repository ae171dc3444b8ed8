#pragma once
// float pow on AVX2 with FMA, 8 lanes at a time, its tables held in registers: the log2 x of
// host_powf_avx512.hpp (see there) with the same accuracy, and 2^w without a table. The tables
// are read as floats, 8 lanes per vpermps: 1/c is a float (so z (1/c) is exact in double) and
// -log2(1/c) the float pair hi + lo, each 16-entry table two ymm registers blended by bit 3 of
// the index. 2^w = 2^n 2^f with n = round(w), |f| <= 1/2, 2^f a polynomial through f^8 (below
// 3e-10 relative), 2^n added to the result's exponent bits (AVX2 has no vscalefpd).
//
// On an Ice Lake Xeon (-march=haswell build) this takes 6.4 cycles per element on one core in
// cache, against 10.1-10.5 for the form before it, which read 16-entry double tables (four vpermd
// and three blends per 4 lanes for each of 1/c, -log2(1/c) and 2^(j/16)), and 2^24 x 3 elements
// on two threads 64.9-65.6 ms against 101-105. libmvec's AVX2 powf (_ZGVdN8vv_powf) reads its
// tables with gathers: on that Xeon VM, whose gathers took about 23 cycles each, it ran at
// 7.5-8.1 ns per element on one core for any input range.
//
// Lanes outside the fast path (as in host_powf_avx512.hpp: x not a positive normal finite float,
// y infinite or NaN, |y log2 x| >= 126) are all ones in `special`; the caller recomputes them.

#if defined(__AVX2__) && defined(__FMA__)
#include "miniapp/core/host_powf_tables.hpp"

#include <immintrin.h>

namespace miniapp::simd::powf8 {

struct Tables {
  __m256 inverse_centre[2];  // 1/c of the 16 subintervals of z: entries 8q .. 8q + 7 in register q
  __m256 log_high[2];        // -log2(1/c) = high + low
  __m256 log_low[2];
};

inline Tables make_tables() {
  const powf_tables::Values v = powf_tables::values();
  Tables t;
  for (int q = 0; q < 2; ++q) {
    t.inverse_centre[q] = _mm256_loadu_ps(v.inverse + 8 * q);
    t.log_high[q] = _mm256_loadu_ps(v.logs_high + 8 * q);
    t.log_low[q] = _mm256_loadu_ps(v.logs_low + 8 * q);
  }
  return t;
}

// table[i] for 8 lanes, i in bits 3:0 of each lane of `index` (vpermps reads bits 2:0); `bit3`
// has bit 3 of each index in its sign bit.
inline __m256 lookup(const __m256 (&table)[2], const __m256i index, const __m256 bit3) {
  return _mm256_blendv_ps(_mm256_permutevar8x32_ps(table[0], index), _mm256_permutevar8x32_ps(table[1], index), bit3);
}

// Four lanes: z in [0.699, 1.398), its 1/c and -log2(1/c) = high + low, k the exponent, y the
// exponent of the power. Returns the double 2^(y log2 x); `out_of_range` is all ones where
// |y log2 x| >= 126 (or NaN).
inline __m256d power4(const __m256d z, const __m256d inverse, const __m256d log_high, const __m256d log_low,
                      const __m256d k, const __m256d y, __m256d& out_of_range) {
  const __m256d r = _mm256_fmsub_pd(z, inverse, _mm256_set1_pd(1.0));
  const __m256d log_centre = _mm256_add_pd(_mm256_add_pd(k, log_high), log_low);  // k + hi exact
  const __m256d log2x = _mm256_fmadd_pd(r, powf_tables::log2_1p_over_r(r), log_centre);
  const __m256d w = _mm256_mul_pd(y, log2x);
  out_of_range = _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), w), _mm256_set1_pd(126.0), _CMP_NLT_UQ);
  const __m256d shifter = _mm256_set1_pd(powf_tables::kIntegerShifter);
  const __m256d shifted = _mm256_add_pd(w, shifter);
  const __m256d f = _mm256_sub_pd(w, _mm256_sub_pd(shifted, shifter));
  const __m256d result = powf_tables::exp2_half(f);
  // times 2^n, n = round(w) in the low bits of `shifted`: n's low 12 bits added to the exponent
  // field (the 64-bit add carries out of the lane for negative n; the result stays a normal
  // double for |w| < 126)
  const __m256i scale = _mm256_slli_epi64(_mm256_castpd_si256(shifted), 52);
  return _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(result), scale));
}

// Lanes 0-3 (h = 0) or 4-7 (h = 1) of 8 floats as doubles.
template <int h>
inline __m256d half_to_double(const __m256 v) {
  return _mm256_cvtps_pd(h == 0 ? _mm256_castps256_ps128(v) : _mm256_extractf128_ps(v, 1));
}

// 8 lanes of pow(x, y); `special` all ones in the lanes the fast path does not cover (their
// values in the result are meaningless).
inline __m256 power8(const Tables& t, const __m256 x, const __m256 y, __m256i& special) {
  const __m256i ix = _mm256_castps_si256(x), iy = _mm256_castps_si256(y);
  const __m256i offset = _mm256_sub_epi32(ix, _mm256_set1_epi32(powf_tables::kSplit));
  const __m256i k = _mm256_srai_epi32(offset, 23);
  const __m256i index = _mm256_srli_epi32(offset, powf_tables::kIndexShift);
  const __m256 bit3 = _mm256_castsi256_ps(_mm256_slli_epi32(index, 28));
  const __m256 z = _mm256_castsi256_ps(_mm256_sub_epi32(ix, _mm256_slli_epi32(k, 23)));
  // x not a positive normal finite float: x - 2^-126 as unsigned at or above 0x7f000000, i.e. as
  // signed, negative or above 0x7effffff
  const __m256i above_min = _mm256_sub_epi32(ix, _mm256_set1_epi32(0x00800000));
  special = _mm256_or_si256(_mm256_cmpgt_epi32(above_min, _mm256_set1_epi32(0x7effffff)),
                            _mm256_cmpgt_epi32(_mm256_setzero_si256(), above_min));
  const __m256i exponent_bits = _mm256_set1_epi32(0x7f800000);
  special = _mm256_or_si256(special, _mm256_cmpeq_epi32(_mm256_and_si256(iy, exponent_bits), exponent_bits));
  const __m256 inverse = lookup(t.inverse_centre, index, bit3);
  const __m256 log_high = lookup(t.log_high, index, bit3), log_low = lookup(t.log_low, index, bit3);
  const __m256 kf = _mm256_cvtepi32_ps(k);  // exact: |k| < 2^8
  __m256d out_of_range[2];
  const __m256d low = power4(half_to_double<0>(z), half_to_double<0>(inverse), half_to_double<0>(log_high),
                             half_to_double<0>(log_low), half_to_double<0>(kf), half_to_double<0>(y), out_of_range[0]);
  const __m256d high = power4(half_to_double<1>(z), half_to_double<1>(inverse), half_to_double<1>(log_high),
                              half_to_double<1>(log_low), half_to_double<1>(kf), half_to_double<1>(y), out_of_range[1]);
  // The out-of-range masks, 4 doubles each, as 8 dwords: the low dword of each lane.
  const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  const __m256i low_mask = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(out_of_range[0]), pick);
  const __m256i high_mask = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(out_of_range[1]), pick);
  special = _mm256_or_si256(special, _mm256_permute2x128_si256(low_mask, high_mask, 0x20));
  return _mm256_set_m128(_mm256_cvtpd_ps(high), _mm256_cvtpd_ps(low));
}

}  // namespace miniapp::simd::powf8
#endif
