#pragma once
// float pow on AVX2 with FMA, 8 lanes at a time, all in float and float-float arithmetic: the
// double-precision form (host_powf_avx512.hpp's, on two halves of 4 lanes) spent most of its
// vector instructions converting to double and back and running every step twice. Tables are
// constants (found by a search, below), held in registers and read with vpermps (AVX2's gathers
// are slow on the machines measured: docs/tuning-notes.md).
//
// log2 x. x = 2^k z, z in [0.699, 1.398) split into 16 subintervals (the split and index of
// host_powf_tables.hpp). Per subinterval a float 1/c (exactly 1 in the one holding 1), chosen
// among the floats within 4096 ulps of 1/centre so that T = -log2(1/c) lies within about 2^-29 of
// Th, a multiple of 2^-16: k + Th is then exact in float, and Tl = T - Th is tiny (its own
// rounding below 2^-53). |r| <= 0.0302.
//   p = z (1/c), e = fma(z, 1/c, -p) exactly, rh = p - 1 exactly (Sterbenz): r = rh + e.
//   log2(1 + rh) = rh s(rh), s = c1 + c2 rh + c3 rh^2 + rh^3 Q(rh) (Q a near-minimax fit to
//   2^-41.7 of s); c2h + c3h rh and c1h + rh a are exact pairs by fma (rh is a multiple of
//   2^-24), and so is rh s_hi. What is left is split by size: `lo_big` (Tl, the low halves of c1
//   and c2, the e term e (1/ln2)(1 - rh)(1 + rh^2), rh^4 Q: up to 2^-16 of the logarithm, so it
//   must reach w_hi) and `lo_small` (below 2^-24 of it: only into w_lo).
//   (k + Th) + rh s_hi = h + h_lo by Fast2Sum: |k + Th| >= 0.0517 > 0.0434 >= |rh s_hi| wherever
//   k + Th is not 0.
// w = y log2 x = w_hi + w_lo, the product y h exact by fma, |w_lo| <~ 2^-23 |w|.
// 2^w = 2^n 2^(j/8) 2^(f + w_lo): 8n + j = round(8 y h) by the shifter 1.5 2^20 (y h is within
//   2^-16 |w| of w and ready one step before w_hi), f = w_hi - (n + j/8) exactly, |f| <= 0.0645.
//   T_j is a float within 64 ulps of 2^(j/8) for which T_j ln2 is within 2^-31.4 T_j of a float
//   (so that f T_j ln2 is one fma), t_j = (2^(j/8) - T_j) / T_j. T_j 2^f = T_j + f (T_j ln2) +
//   T_j f^2 q(f), q of degree 2 (minimax, 2^-32.2); the corrections t_j + w_lo ln2 multiply it;
//   one final rounding; 2^n added to the exponent bits (n >= -126 only with a factor >= 1 beside
//   it, so the result stays a normal float).
// Error before the final rounding, relative: the logarithm to 2^-37.6 at worst (next to the
// subinterval holding 1, where k + Th and rh s cancel), so w to 2^-30.6 absolute at |w| = 126;
// the exponential's polynomial 2^-32.2, the low-part sums about 2^-33 each: in all below 2^-30,
// about 0.008 ulp beyond the rounding's 0.5 (the unit tests hold every lane to 0.51 ulp).
//
// The steps are three functions, and power_array runs them over whole arrays with one vector's
// logarithm issued before the previous one's exponential: one vector at a time, each waited on a
// chain of about 70 cycles of dependent steps.
//
// Lanes outside the fast path are all ones in `special` (the caller recomputes them): x not a
// positive normal finite float, or |w_hi| >= 125.9375 or NaN, which also takes y infinite or NaN
// (y log2 x is then infinite or NaN, x = 1 included). Every lane with x a positive normal float,
// y finite and |y log2 x| < 125.9 is computed.

#if defined(__AVX2__) && defined(__FMA__)
#include "miniapp/core/host_powf_tables.hpp"

#include <cstddef>
#include <cstdint>
#include <immintrin.h>

namespace miniapp::simd::powf8 {

struct Tables {
  __m256 inverse[2];   // 1/c: entries 8q .. 8q + 7 in register q
  __m256 log_high[2];  // -log2(1/c) = high + low, high a multiple of 2^-16, low below 2^-28
  __m256 log_low[2];
  __m256 exp_high;       // T_j, a float near 2^(j/8)
  __m256 exp_low_ratio;  // t_j = (2^(j/8) - T_j) / T_j
  __m256 exp_ln2;        // T_j ln2 as a float (within 2^-31.4 T_j)
};

// The tables' values, found by a search (tests/unit/test_host_power_tables.cpp runs it again and
// checks that it gives these): per subinterval i (of [0.699, 1.398)'s 16, bounds by kSplit and
// kIndexShift), 1 in the one holding 1; elsewhere, among the 8193 floats within 4096 ulps of
// 2 / (low + high), the one whose -log2 (in double) lies nearest a multiple of 2^-16; high is that
// multiple and low the rest, in long double. Per j in 0..7, among the 129 floats within 64 ulps of
// 2^(j/8), the T_j whose T_j ln2 (in long double) lies nearest a float, relative to T_j; exp_ln2 is
// that float and t_j = (2^(j/8) - T_j) / T_j. Constants, so that no search lands in a timed call.
namespace table_values {
inline constexpr float inverse[16] = {
    0x1.66111cp+0f, 0x1.5725aep+0f, 0x1.4960d8p+0f, 0x1.3c843cp+0f, 0x1.30dd96p+0f, 0x1.25eb86p+0f,
    0x1.1baad4p+0f, 0x1.1252acp+0f, 0x1.093984p+0f, 0x1p+0f,        0x1.e58e36p-1f, 0x1.ca3f3p-1f,
    0x1.b2038p-1f,  0x1.9c0f1p-1f,  0x1.886218p-1f, 0x1.7694b2p-1f};
inline constexpr float log_high[16] = {
    -0x1.efb4p-2f, -0x1.b0d4p-2f, -0x1.7454p-2f, -0x1.397cp-2f, -0x1.0214p-2f, -0x1.982p-3f,
    -0x1.2f38p-3f, -0x1.988p-4f,  -0x1.a26p-5f,  0x0p+0f,       0x1.396p-4f,   0x1.47b8p-3f,
    0x1.e84p-3f,   0x1.40dp-2f,   0x1.8918p-2f,  0x1.cdbp-2f};
inline constexpr float log_low[16] = {
    0x1.38cbbcp-32f, 0x1.2148fp-30f,   0x1.e30302p-30f, 0x1.43ca96p-30f, 0x1.a948ap-34f,   -0x1.1f3b8cp-29f,
    0x1.c96406p-30f, -0x1.41dac2p-38f, 0x1.62d632p-32f, 0x0p+0f,         -0x1.6b7be4p-32f, 0x1.6e5058p-31f,
    0x1.57f15p-33f,  -0x1.7b6ff2p-30f, -0x1.cc2b1ep-33f, 0x1.803446p-36f};
inline constexpr float exp_high[8] = {0x1.ffff9ep-1f, 0x1.172bd8p+0f, 0x1.306fa6p+0f, 0x1.4bfd6ep+0f,
                                      0x1.6a0a32p+0f, 0x1.8ace4ap+0f, 0x1.ae89a4p+0f, 0x1.d58206p+0f};
inline constexpr float exp_low_ratio[8] = {0x1.88004cp-19f,  -0x1.34eaaep-18f, 0x1.8a7696p-19f, 0x1.86a5cap-19f,
                                           -0x1.ab9f5ep-19f, 0x1.a49baap-22f,  0x1.971ce4p-19f, -0x1.0621dp-18f};
inline constexpr float exp_ln2[8] = {0x1.62e3ecp-1f, 0x1.830378p-1f, 0x1.a609cp-1f,  0x1.cc3c5ep-1f,
                                     0x1.f5e4cep-1f, 0x1.11a896p+0f, 0x1.2a6d0cp+0f, 0x1.457026p+0f};
}  // namespace table_values

inline Tables make_tables() {
  namespace v = table_values;
  Tables t;
  for (int q = 0; q < 2; ++q) {
    t.inverse[q] = _mm256_loadu_ps(v::inverse + 8 * q);
    t.log_high[q] = _mm256_loadu_ps(v::log_high + 8 * q);
    t.log_low[q] = _mm256_loadu_ps(v::log_low + 8 * q);
  }
  t.exp_high = _mm256_loadu_ps(v::exp_high);
  t.exp_low_ratio = _mm256_loadu_ps(v::exp_low_ratio);
  t.exp_ln2 = _mm256_loadu_ps(v::exp_ln2);
  return t;
}

// table[i] for 8 lanes, i in bits 3:0 of each lane of `index` (vpermps reads bits 2:0); `bit3`
// has bit 3 of each index in its sign bit.
inline __m256 lookup(const __m256 (&table)[2], const __m256i index, const __m256 bit3) {
  return _mm256_blendv_ps(_mm256_permutevar8x32_ps(table[0], index), _mm256_permutevar8x32_ps(table[1], index), bit3);
}

namespace coefficients {
// log2(1 + r) / r = c1 + c2 r + c3 r^2 + r^3 (c4 + c5 r + c6 r^2 + c7 r^3), |r| <= 0.0302; c1, c2,
// c3 as pairs high + low (1/ln2, -1/(2 ln2), 1/(3 ln2))
inline constexpr float c1h = 0x1.715476p+0f, c1l = 0x1.4ae0cp-26f;
inline constexpr float c2h = -0x1.715476p-1f, c2l = -0x1.4ae0cp-27f;
inline constexpr float c3h = 0x1.ec709ep-2f;  // its low half (c3l rh^3, 2^-44) is left out
inline constexpr float c4 = -0x1.715472p-2f, c5 = 0x1.2776cp-2f, c6 = -0x1.ecf214p-3f, c7 = 0x1.a68ff2p-3f;
inline constexpr float ln2 = 0x1.62e43p-1f;
// 2^f - 1 - f ln2 = f^2 (p2 + p3 f + p4 f^2), |f| <= 0.0645 (minimax, 2^-32.2)
inline constexpr float p2 = 0x1.ebfbep-3f, p3 = 0x1.c6babcp-5f, p4 = 0x1.3b323ep-7f;
}  // namespace coefficients

// Shorthands of the three steps below.
inline __m256 set(float v) { return _mm256_set1_ps(v); }
inline __m256 fma(__m256 a, __m256 b, __m256 d) { return _mm256_fmadd_ps(a, b, d); }

// 8 lanes of pow(x, y) in three steps, so that power_array can overlap one vector's logarithm
// with another's exponential: power8_reduce (x = 2^k z, the tables, r = rh + e), power8_poly
// (log2 x = h + lo_big + lo_rest), power8_exp (2^(y log2 x), and `special` all ones in the lanes
// the fast path does not cover; their values in the result are meaningless).
struct Reduced {
  __m256 rh, e, log_low, b, y;  // b = k + Th
  __m256i special_x;
};
struct LogPart {
  __m256 h, lo_big, lo_rest, y;
  __m256i special_x;
};
inline Reduced power8_reduce(const Tables& t, const __m256 x, const __m256 y) {
  const __m256i ix = _mm256_castps_si256(x);
  const __m256i offset = _mm256_sub_epi32(ix, _mm256_set1_epi32(powf_tables::kSplit));
  const __m256i index = _mm256_srli_epi32(offset, powf_tables::kIndexShift);
  const __m256 bit3 = _mm256_castsi256_ps(_mm256_slli_epi32(offset, 9));
  const __m256i k_bits = _mm256_and_si256(offset, _mm256_set1_epi32(static_cast<std::int32_t>(0xff800000u)));
  const __m256 z = _mm256_castsi256_ps(_mm256_sub_epi32(ix, k_bits));
  // x not a positive normal finite float: x - 2^-126 as unsigned at or above 0x7f000000, i.e.
  // ix + 0x7f800000 as signed above 0xfeffffff
  const __m256i special_x = _mm256_cmpgt_epi32(_mm256_add_epi32(ix, _mm256_set1_epi32(0x7f800000)),
                                               _mm256_set1_epi32(static_cast<std::int32_t>(0xfeffffffu)));
  const __m256 inverse = lookup(t.inverse, index, bit3);
  const __m256 log_high = lookup(t.log_high, index, bit3), log_low = lookup(t.log_low, index, bit3);
  const __m256 k23 = _mm256_cvtepi32_ps(k_bits);  // k 2^23, exact

  // r = rh + e exactly
  const __m256 p = _mm256_mul_ps(z, inverse);
  const __m256 e = _mm256_fmsub_ps(z, inverse, p);
  const __m256 rh = _mm256_sub_ps(p, set(1.0f));
  const __m256 b = fma(k23, set(0x1p-23f), log_high);
  return {rh, e, log_low, b, y, special_x};
}

inline LogPart power8_poly(const Reduced& u) {
  namespace c = coefficients;
  const __m256 rh = u.rh, e = u.e, log_low = u.log_low, b = u.b;
  const __m256 rh2 = _mm256_mul_ps(rh, rh);
  const __m256 q = fma(fma(fma(set(c::c7), rh, set(c::c6)), rh, set(c::c5)), rh, set(c::c4));
  // a + a_lo = c2h + c3h rh, s_hi + s_lo = c1h + rh a, l_hi + l_err = rh s_hi: each exact
  const __m256 a = fma(set(c::c3h), rh, set(c::c2h));
  const __m256 a_lo = fma(set(c::c3h), rh, _mm256_sub_ps(set(c::c2h), a));
  const __m256 s_hi = fma(rh, a, set(c::c1h));
  const __m256 s_lo = fma(rh, a, _mm256_sub_ps(set(c::c1h), s_hi));
  const __m256 l_hi = _mm256_mul_ps(rh, s_hi);
  const __m256 l_err = _mm256_fmsub_ps(rh, s_hi, l_hi);
  // e (1/ln2) / (1 + rh) = e (1/ln2)(1 - rh)(1 + rh^2), to e rh^4
  const __m256 e_first = fma(set(-c::c1h), rh, set(c::c1h));
  const __m256 e_factor = fma(rh2, e_first, e_first);
  const __m256 low_terms = fma(rh2, set(c::c2l), fma(rh, set(c::c1l), log_low));
  const __m256 lo_big = fma(_mm256_mul_ps(rh2, rh2), q, fma(e, e_factor, low_terms));
  const __m256 lo_small = fma(rh2, a_lo, fma(rh, s_lo, l_err));
  // (k + Th) + l_hi = h + h_lo by Fast2Sum
  const __m256 h = _mm256_add_ps(b, l_hi);
  const __m256 h_lo = _mm256_sub_ps(l_hi, _mm256_sub_ps(h, b));
  return {h, lo_big, _mm256_add_ps(h_lo, lo_small), u.y, u.special_x};
}

inline LogPart power8_log(const Tables& t, const __m256 x, const __m256 y) { return power8_poly(power8_reduce(t, x, y)); }

inline __m256 power8_exp(const Tables& t, const LogPart& l, __m256i& special) {
  namespace c = coefficients;
  const __m256 h = l.h, lo_big = l.lo_big, y = l.y;
  const __m256 wh = _mm256_mul_ps(y, h);
  const __m256 wh_err = _mm256_fmsub_ps(y, h, wh);
  const __m256 w_hi = fma(y, lo_big, wh);
  const __m256 w_lo = _mm256_add_ps(fma(y, lo_big, _mm256_sub_ps(wh, w_hi)), fma(y, l.lo_rest, wh_err));
  const __m256i w_magnitude = _mm256_and_si256(_mm256_castps_si256(w_hi), _mm256_set1_epi32(0x7fffffff));
  special = _mm256_or_si256(l.special_x, _mm256_cmpgt_epi32(w_magnitude, _mm256_set1_epi32(0x42fbdfff)));  // 125.9375
  const __m256 shifter = set(0x1.8p20f);
  const __m256 shifted = fma(y, h, shifter);
  // 8n + j = round(8 y h) in the low bits of `shifted`; f = w_hi - (n + j/8) exactly
  const __m256 f = _mm256_sub_ps(w_hi, _mm256_sub_ps(shifted, shifter));
  const __m256i eighths = _mm256_castps_si256(shifted);
  const __m256 exp_high = _mm256_permutevar8x32_ps(t.exp_high, eighths);
  const __m256 exp_low_ratio = _mm256_permutevar8x32_ps(t.exp_low_ratio, eighths);
  const __m256 exp_ln2 = _mm256_permutevar8x32_ps(t.exp_ln2, eighths);
  // T + f (T ln2) = r_hi + r_lo exactly enough (r_lo to 2^-48); T f^2 q(f); the corrections
  const __m256 r_hi = fma(f, exp_ln2, exp_high);
  const __m256 r_lo = fma(f, exp_ln2, _mm256_sub_ps(exp_high, r_hi));
  const __m256 f2 = _mm256_mul_ps(f, f);
  const __m256 qe = fma(set(c::p4), f2, fma(set(c::p3), f, set(c::p2)));
  const __m256 correction = fma(w_lo, set(c::ln2), exp_low_ratio);
  const __m256 tail = fma(_mm256_mul_ps(exp_high, f2), fma(correction, set(c::p2), qe), r_lo);
  const __m256 result = _mm256_add_ps(r_hi, fma(correction, r_hi, tail));
  // times 2^n: n's bits (bits 3 and up of 8n + j) into the exponent field
  const __m256i scale =
      _mm256_and_si256(_mm256_slli_epi32(eighths, 20), _mm256_set1_epi32(static_cast<std::int32_t>(0xff800000u)));
  return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(result), scale));
}


// z[e] = pow(x[e], y[e]) for e in [0, n - n % 8) (the caller does the tail), software-pipelined:
// the logarithm of the next vector is issued before the exponential of this one, two vectors a
// loop iteration, so that the out-of-order window holds independent work instead of one long
// chain of dependent steps (docs/tuning-notes.md). The special lanes go to
// slow(x, y, c, special), which returns c with those lanes replaced; it is called only for vectors
// with a special lane. x and y are prefetched 512 elements ahead, once per cache line.
template <class Slow>
inline void power_array(const Tables& t, const float* x, const float* y, float* z, std::size_t n, Slow slow) {
  const auto log_of = [&](std::size_t e) { return power8_log(t, _mm256_loadu_ps(x + e), _mm256_loadu_ps(y + e)); };
  const auto finish = [&](const LogPart& l, std::size_t e) {
    __m256i special;
    __m256 c = power8_exp(t, l, special);
    if (!_mm256_testz_si256(special, special)) c = slow(_mm256_loadu_ps(x + e), _mm256_loadu_ps(y + e), c, special);
    _mm256_storeu_ps(z + e, c);
  };
  if (n < 8) return;
  LogPart next = log_of(0);
  std::size_t e = 0;
  for (; e + 24 <= n; e += 16) {
    _mm_prefetch(reinterpret_cast<const char*>(x + e + 512), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(y + e + 512), _MM_HINT_T0);
    const LogPart second = log_of(e + 8);
    finish(next, e);
    next = log_of(e + 16);
    finish(second, e + 8);
  }
  if (e + 16 <= n) {
    const LogPart second = log_of(e + 8);
    finish(next, e);
    next = second;
    e += 8;
  }
  finish(next, e);
}

}  // namespace miniapp::simd::powf8
#endif
