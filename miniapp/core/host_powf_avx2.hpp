#pragma once
// float pow on AVX2 with FMA, 8 lanes at a time, its tables held in registers: the algorithm,
// tables and accuracy of host_powf_avx512.hpp (see there). Each 16-entry table of doubles is four
// ymm registers of four entries, read with one vpermd per register and two blends by bits 2 and
// 3 of the index; 2^n goes into the result's exponent bits (AVX2 has no vscalefpd).
//
// libmvec's AVX2 powf (_ZGVdN8vv_powf) reads its tables with gathers: on an Ice Lake Xeon VM
// whose gathers took about 23 cycles each (an 8-lane vpgatherdd every 8.1 ns in a throughput
// loop), it ran at 7.5-8.1 ns per element on one core for any input range.
//
// Lanes outside the fast path (as in host_powf_avx512.hpp: x not a positive normal finite float,
// y infinite or NaN, |y log2 x| >= 126) are all ones in `special`; the caller recomputes them.

#if defined(__AVX2__) && defined(__FMA__)
#include "miniapp/core/host_powf_tables.hpp"

#include <immintrin.h>

namespace miniapp::simd::powf8 {

struct Tables {
  __m256i inverse_centre[4];  // 1/c of the 16 subintervals of z: entries 4q .. 4q + 3 in register q
  __m256i log_centre[4];      // -log2(1/c)
  __m256i exp2_sixteenths[4];  // 2^(j/16)
};

inline Tables make_tables() {
  const powf_tables::Values v = powf_tables::values();
  Tables t;
  for (int q = 0; q < 4; ++q) {
    t.inverse_centre[q] = _mm256_castpd_si256(_mm256_loadu_pd(v.inverse + 4 * q));
    t.log_centre[q] = _mm256_castpd_si256(_mm256_loadu_pd(v.logs + 4 * q));
    t.exp2_sixteenths[q] = _mm256_castpd_si256(_mm256_loadu_pd(v.exps + 4 * q));
  }
  return t;
}

// table[i] for four lanes, i in bits 3:0 of each 64-bit lane of `index` (the bits above ignored).
inline __m256d lookup(const __m256i (&table)[4], const __m256i index) {
  // Entry i & 3 of each register is its dwords 2 (i & 3) and 2 (i & 3) + 1.
  const __m256i low_word = _mm256_slli_epi64(_mm256_and_si256(index, _mm256_set1_epi64x(3)), 1);
  const __m256i words = _mm256_or_si256(low_word, _mm256_slli_epi64(_mm256_add_epi64(low_word, _mm256_set1_epi64x(1)), 32));
  __m256d entries[4];
  for (int q = 0; q < 4; ++q) entries[q] = _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(table[q], words));
  // blendv takes the second operand where a lane's sign bit is set: bit 2 of i, then bit 3.
  const __m256d bit2 = _mm256_castsi256_pd(_mm256_slli_epi64(index, 61));
  const __m256d bit3 = _mm256_castsi256_pd(_mm256_slli_epi64(index, 60));
  return _mm256_blendv_pd(_mm256_blendv_pd(entries[0], entries[1], bit2), _mm256_blendv_pd(entries[2], entries[3], bit2),
                          bit3);
}

// Four lanes: z in [0.699, 1.398), k the exponent, index the subinterval (bits 3:0 of each 64-bit
// lane), y the exponent of the power. Returns the double 2^(y log2 x); `out_of_range` is all ones
// where |y log2 x| >= 126 (or NaN).
inline __m256d power4(const Tables& t, const __m256d z, const __m256d k, const __m256i index, const __m256d y,
                      __m256d& out_of_range) {
  const __m256d r = _mm256_fmsub_pd(z, lookup(t.inverse_centre, index), _mm256_set1_pd(1.0));
  const __m256d log2x = _mm256_fmadd_pd(r, powf_tables::log2_1p_over_r(r), _mm256_add_pd(k, lookup(t.log_centre, index)));
  const __m256d w = _mm256_mul_pd(y, log2x);
  out_of_range = _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), w), _mm256_set1_pd(126.0), _CMP_NLT_UQ);
  const __m256d shifter = _mm256_set1_pd(powf_tables::kSixteenthsShifter);
  const __m256d shifted = _mm256_add_pd(w, shifter);
  const __m256d sixteenths = _mm256_sub_pd(shifted, shifter);
  const __m256d f = _mm256_sub_pd(w, sixteenths);
  const __m256i m = _mm256_castpd_si256(shifted);  // round(16 w) in the low dword of each lane
  const __m256d result = _mm256_mul_pd(lookup(t.exp2_sixteenths, m), powf_tables::exp2_small(f));
  // times 2^n, n = round(16 w) >> 4: n's low 12 bits added to the exponent field (the 64-bit add
  // wraps past the sign for negative n; the result stays a normal double for |w| < 126)
  const __m256i n = _mm256_srai_epi32(m, 4);
  return _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(result), _mm256_slli_epi64(n, 52)));
}

// 8 lanes of pow(x, y); `special` all ones in the lanes the fast path does not cover (their
// values in the result are meaningless).
inline __m256 power8(const Tables& t, const __m256 x, const __m256 y, __m256i& special) {
  const __m256i ix = _mm256_castps_si256(x), iy = _mm256_castps_si256(y);
  const __m256i offset = _mm256_sub_epi32(ix, _mm256_set1_epi32(powf_tables::kSplit));
  const __m256i k = _mm256_srai_epi32(offset, 23);
  const __m256i index = _mm256_srli_epi32(offset, powf_tables::kIndexShift);
  const __m256i iz = _mm256_sub_epi32(ix, _mm256_slli_epi32(k, 23));
  // x not a positive normal finite float: x - 2^-126 as unsigned at or above 0x7f000000, i.e. as
  // signed, negative or above 0x7effffff
  const __m256i above_min = _mm256_sub_epi32(ix, _mm256_set1_epi32(0x00800000));
  special = _mm256_or_si256(_mm256_cmpgt_epi32(above_min, _mm256_set1_epi32(0x7effffff)),
                            _mm256_cmpgt_epi32(_mm256_setzero_si256(), above_min));
  const __m256i exponent_bits = _mm256_set1_epi32(0x7f800000);
  special = _mm256_or_si256(special, _mm256_cmpeq_epi32(_mm256_and_si256(iy, exponent_bits), exponent_bits));
  __m128 half[2];
  __m256d out_of_range[2];
  for (int h = 0; h < 2; ++h) {
    const __m128i z32 = h == 0 ? _mm256_castsi256_si128(iz) : _mm256_extracti128_si256(iz, 1);
    const __m128i k32 = h == 0 ? _mm256_castsi256_si128(k) : _mm256_extracti128_si256(k, 1);
    const __m128i index32 = h == 0 ? _mm256_castsi256_si128(index) : _mm256_extracti128_si256(index, 1);
    const __m128 y32 = h == 0 ? _mm256_castps256_ps128(y) : _mm256_extractf128_ps(y, 1);
    const __m256d p = power4(t, _mm256_cvtps_pd(_mm_castsi128_ps(z32)), _mm256_cvtepi32_pd(k32),
                             _mm256_cvtepu32_epi64(index32), _mm256_cvtps_pd(y32), out_of_range[h]);
    half[h] = _mm256_cvtpd_ps(p);
  }
  // The out-of-range masks, 4 doubles each, as 8 dwords: the low dword of each lane.
  const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  const __m256i low = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(out_of_range[0]), pick);
  const __m256i high = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(out_of_range[1]), pick);
  special = _mm256_or_si256(special, _mm256_permute2x128_si256(low, high, 0x20));
  return _mm256_set_m128(half[1], half[0]);
}

}  // namespace miniapp::simd::powf8
#endif
