#pragma once
// float pow with 8 (AVX2 with FMA) or 16 (AVX-512F) lanes at a time, all in float and float-float
// arithmetic. One algorithm for both widths (the steps below are templates over `Avx2` and
// `Avx512`, which give each the same operations), so both round every lane the same way.
// - Tables are constants (found by a search, below), held in registers and read by permutes
//   (gathers are slow on the machines measured: docs/tuning-notes.md): a 16-entry table is two
//   ymm on AVX2 (vpermps twice and a blend) and one zmm on AVX-512 (one vpermps).
// - An earlier AVX-512 form computed in double, two halves of 8 lanes; on a Zen 5 EPYC it took
//   1.7x this one's time per element from L2 (docs/tuning-notes.md). On AVX2 the double form had
//   spent most of its instructions converting to double and back and running every step twice.
//
// log2 x. x = 2^k z, z in [0.699, 1.398) split into 16 subintervals (kSplit: the exponent split
// at the bits of 0.69921875, so that x near 1 keeps k = 0; kIndexShift: the subinterval is the top
// 4 bits of z's mantissa past the split). Per subinterval a float 1/c (exactly 1 in the one
// holding 1), chosen among the floats within 4096 ulps of 1/centre so that T = -log2(1/c) lies
// within about 2^-29 of Th, a multiple of 2^-16: k + Th is then exact in float, and Tl = T - Th is
// tiny (its own rounding below 2^-53). |r| <= 0.0302.
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
// Lanes outside the fast path are set in `special` (the caller recomputes them): x not a
// positive normal finite float, or |w_hi| >= 125.9375 or NaN, which also takes y infinite or NaN
// (y log2 x is then infinite or NaN, x = 1 included). Every lane with x a positive normal float,
// y finite and |y log2 x| < 125.9 is computed.


#if defined(__AVX2__) && defined(__FMA__)
#include <cstddef>
#include <cstdint>
#include <immintrin.h>

#include "miniapp/core/pow_float_constants.hpp"  // kSplit, the tables' values, the coefficients

// GCC 12 warns that the intrinsics' own placeholder operands are, or may be, used uninitialized
// wherever they inline (GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace miniapp::simd::powff {

// The operations of one register width. lookup16 reads entry (offset >> kIndexShift) & 15 of a
// 16-entry table, lookup8 entry index & 7 of an 8-entry one; Mask is the width's lane mask.
struct Avx2 {
  using F = __m256;
  using I = __m256i;
  using Mask = __m256i;  // all ones in a set lane
  static constexpr int kLanes = 8;
  struct Table16 {
    __m256 low, high;  // entries 0-7, 8-15
  };
  using Table8 = __m256;
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F set(float v) { return _mm256_set1_ps(v); }
  static I seti(std::uint32_t v) { return _mm256_set1_epi32(static_cast<std::int32_t>(v)); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F fms(F a, F b, F c) { return _mm256_fmsub_ps(a, b, c); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static I addi(I a, I b) { return _mm256_add_epi32(a, b); }
  static I subi(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I andi(I a, I b) { return _mm256_and_si256(a, b); }
  static I shift_left(I a, int n) { return _mm256_slli_epi32(a, n); }
  static I shift_right(I a, int n) { return _mm256_srli_epi32(a, n); }
  static F as_float(I a) { return _mm256_castsi256_ps(a); }
  static I as_int(F a) { return _mm256_castps_si256(a); }
  static F to_float(I a) { return _mm256_cvtepi32_ps(a); }
  static Mask greater(I a, I b) { return _mm256_cmpgt_epi32(a, b); }  // signed
  static Mask either(Mask a, Mask b) { return _mm256_or_si256(a, b); }
  static bool any(Mask m) { return !_mm256_testz_si256(m, m); }
  static F select(Mask m, F if_set, F otherwise) { return _mm256_blendv_ps(otherwise, if_set, _mm256_castsi256_ps(m)); }
  static Table16 table16(const float* v) { return {_mm256_loadu_ps(v), _mm256_loadu_ps(v + 8)}; }
  static Table8 table8(const float* v) { return _mm256_loadu_ps(v); }
  static F lookup16(const Table16& t, I offset) {
    const I index = shift_right(offset, kIndexShift);  // vpermps reads its bits 2:0
    const F bit3 = as_float(shift_left(offset, 9));     // index bit 3 in the sign bit
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(t.low, index), _mm256_permutevar8x32_ps(t.high, index), bit3);
  }
  static F lookup8(Table8 t, I index) { return _mm256_permutevar8x32_ps(t, index); }
};

#if defined(__AVX512F__)
struct Avx512 {
  using F = __m512;
  using I = __m512i;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  using Table16 = __m512;
  using Table8 = __m512;  // the 8 entries twice: vpermps reads bits 3:0
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F set(float v) { return _mm512_set1_ps(v); }
  static I seti(std::uint32_t v) { return _mm512_set1_epi32(static_cast<std::int32_t>(v)); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F fms(F a, F b, F c) { return _mm512_fmsub_ps(a, b, c); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static I addi(I a, I b) { return _mm512_add_epi32(a, b); }
  static I subi(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I andi(I a, I b) { return _mm512_and_si512(a, b); }
  static I shift_left(I a, unsigned n) { return _mm512_slli_epi32(a, n); }
  static I shift_right(I a, unsigned n) { return _mm512_srli_epi32(a, n); }
  static F as_float(I a) { return _mm512_castsi512_ps(a); }
  static I as_int(F a) { return _mm512_castps_si512(a); }
  static F to_float(I a) { return _mm512_cvtepi32_ps(a); }
  static Mask greater(I a, I b) { return _mm512_cmpgt_epi32_mask(a, b); }  // signed
  static Mask either(Mask a, Mask b) { return a | b; }
  static bool any(Mask m) { return m != 0; }
  static F select(Mask m, F if_set, F otherwise) { return _mm512_mask_blend_ps(m, otherwise, if_set); }
  static Table16 table16(const float* v) { return _mm512_loadu_ps(v); }
  static Table8 table8(const float* v) {
    const __m256 eight = _mm256_loadu_ps(v);
    return _mm512_insertf32x8(_mm512_castps256_ps512(eight), eight, 1);
  }
  static F lookup16(Table16 t, I offset) { return _mm512_permutexvar_ps(shift_right(offset, kIndexShift), t); }
  static F lookup8(Table8 t, I index) { return _mm512_permutexvar_ps(index, t); }
};
#endif

template <class L>
struct Tables {
  typename L::Table16 inverse, log_high, log_low;  // 1/c; -log2(1/c) = high + low
  typename L::Table8 exp_high, exp_low_ratio, exp_ln2;  // T_j; t_j; T_j ln2 as a float
};

template <class L>
Tables<L> make_tables() {
  namespace v = table_values;
  return {L::table16(v::inverse), L::table16(v::log_high), L::table16(v::log_low),
          L::table8(v::exp_high), L::table8(v::exp_low_ratio), L::table8(v::exp_ln2)};
}

// The lanes of pow(x, y) in three steps, so that power_array can overlap one vector's logarithm
// with another's exponential: reduce (x = 2^k z, the tables, r = rh + e), poly (log2 x = h +
// lo_big + lo_rest), exp (2^(y log2 x), and `special` set in the lanes the fast path does not
// cover; their values in the result are meaningless).
template <class L>
struct Reduced {
  typename L::F rh, e, log_low, b, y;  // b = k + Th
  typename L::Mask special_x;
};
template <class L>
struct LogPart {
  typename L::F h, lo_big, lo_rest, y;
  typename L::Mask special_x;
};

template <class L>
[[gnu::always_inline]] inline Reduced<L> reduce(const Tables<L>& t, const typename L::F x, const typename L::F y) {
  using I = typename L::I;
  using F = typename L::F;
  const I ix = L::as_int(x);
  const I offset = L::subi(ix, L::seti(kSplit));
  const I k_bits = L::andi(offset, L::seti(0xff800000u));
  const F z = L::as_float(L::subi(ix, k_bits));
  // x not a positive normal finite float: x - 2^-126 as unsigned at or above 0x7f000000, i.e.
  // ix + 0x7f800000 as signed above 0xfeffffff
  const typename L::Mask special_x = L::greater(L::addi(ix, L::seti(0x7f800000u)), L::seti(0xfeffffffu));
  const F inverse = L::lookup16(t.inverse, offset);
  const F log_high = L::lookup16(t.log_high, offset), log_low = L::lookup16(t.log_low, offset);
  const F k23 = L::to_float(k_bits);  // k 2^23, exact

  // r = rh + e exactly
  const F p = L::mul(z, inverse);
  const F e = L::fms(z, inverse, p);
  const F rh = L::sub(p, L::set(1.0f));
  const F b = L::fma(k23, L::set(0x1p-23f), log_high);
  return {rh, e, log_low, b, y, special_x};
}

template <class L>
[[gnu::always_inline]] inline LogPart<L> poly(const Reduced<L>& u) {
  namespace c = coefficients;
  using F = typename L::F;
  const F rh = u.rh, e = u.e, b = u.b;
  const F rh2 = L::mul(rh, rh);
  const F q = L::fma(L::fma(L::fma(L::set(c::c7), rh, L::set(c::c6)), rh, L::set(c::c5)), rh, L::set(c::c4));
  // a + a_lo = c2h + c3h rh, s_hi + s_lo = c1h + rh a, l_hi + l_err = rh s_hi: each exact
  const F a = L::fma(L::set(c::c3h), rh, L::set(c::c2h));
  const F a_lo = L::fma(L::set(c::c3h), rh, L::sub(L::set(c::c2h), a));
  const F s_hi = L::fma(rh, a, L::set(c::c1h));
  const F s_lo = L::fma(rh, a, L::sub(L::set(c::c1h), s_hi));
  const F l_hi = L::mul(rh, s_hi);
  const F l_err = L::fms(rh, s_hi, l_hi);
  // e (1/ln2) / (1 + rh) = e (1/ln2)(1 - rh)(1 + rh^2), to e rh^4
  const F e_first = L::fma(L::set(-c::c1h), rh, L::set(c::c1h));
  const F e_factor = L::fma(rh2, e_first, e_first);
  const F low_terms = L::fma(rh2, L::set(c::c2l), L::fma(rh, L::set(c::c1l), u.log_low));
  const F lo_big = L::fma(L::mul(rh2, rh2), q, L::fma(e, e_factor, low_terms));
  const F lo_small = L::fma(rh2, a_lo, L::fma(rh, s_lo, l_err));
  // (k + Th) + l_hi = h + h_lo by Fast2Sum
  const F h = L::add(b, l_hi);
  const F h_lo = L::sub(l_hi, L::sub(h, b));
  return {h, lo_big, L::add(h_lo, lo_small), u.y, u.special_x};
}

template <class L>
[[gnu::always_inline]] inline LogPart<L> log_part(const Tables<L>& t, const typename L::F x, const typename L::F y) {
  return poly<L>(reduce<L>(t, x, y));
}

template <class L>
[[gnu::always_inline]] inline typename L::F exp_part(const Tables<L>& t, const LogPart<L>& l, typename L::Mask& special) {
  namespace c = coefficients;
  using F = typename L::F;
  using I = typename L::I;
  const F h = l.h, lo_big = l.lo_big, y = l.y;
  const F wh = L::mul(y, h);
  const F wh_err = L::fms(y, h, wh);
  const F w_hi = L::fma(y, lo_big, wh);
  const F w_lo = L::add(L::fma(y, lo_big, L::sub(wh, w_hi)), L::fma(y, l.lo_rest, wh_err));
  const I w_magnitude = L::andi(L::as_int(w_hi), L::seti(0x7fffffffu));
  special = L::either(l.special_x, L::greater(w_magnitude, L::seti(0x42fbdfffu)));  // 125.9375
  const F shifter = L::set(0x1.8p20f);
  const F shifted = L::fma(y, h, shifter);
  // 8n + j = round(8 y h) in the low bits of `shifted`; f = w_hi - (n + j/8) exactly
  const F f = L::sub(w_hi, L::sub(shifted, shifter));
  const I eighths = L::as_int(shifted);
  const F exp_high = L::lookup8(t.exp_high, eighths);
  const F exp_low_ratio = L::lookup8(t.exp_low_ratio, eighths);
  const F exp_ln2 = L::lookup8(t.exp_ln2, eighths);
  // T + f (T ln2) = r_hi + r_lo exactly enough (r_lo to 2^-48); T f^2 q(f); the corrections
  const F r_hi = L::fma(f, exp_ln2, exp_high);
  const F r_lo = L::fma(f, exp_ln2, L::sub(exp_high, r_hi));
  const F f2 = L::mul(f, f);
  const F qe = L::fma(L::set(c::p4), f2, L::fma(L::set(c::p3), f, L::set(c::p2)));
  const F correction = L::fma(w_lo, L::set(c::ln2), exp_low_ratio);
  const F tail = L::fma(L::mul(exp_high, f2), L::fma(correction, L::set(c::p2), qe), r_lo);
  const F result = L::add(r_hi, L::fma(correction, r_hi, tail));
  // times 2^n: n's bits (bits 3 and up of 8n + j) into the exponent field
  const I scale = L::andi(L::shift_left(eighths, 20), L::seti(0xff800000u));
  return L::as_float(L::addi(L::as_int(result), scale));
}

// z[e] = pow(x[e], y[e]) for e in [0, n - n % kLanes) (the caller does the tail), a block of
// kBlockVectors vectors at a time. Within a block the loop calls nothing and is
// software-pipelined: the logarithm of the next vector is issued before the exponential of this
// one, two vectors a loop iteration, so that the out-of-order window holds independent work
// instead of one long chain of dependent steps (docs/tuning-notes.md). Vectors with a special lane
// are noted, not stored, and after the block computed again and passed to slow(x, y, c, special),
// which returns c with those lanes replaced; so z may be x or y. The steps are forced inline and
// the tables copied into locals: with a call in the loop (slow, or GCC's out-of-line log_part) the
// tables and constants were reloaded from memory every vector (the cost is in
// docs/tuning-notes.md). x and y are prefetched 512 elements ahead, once per cache line. Returns
// how many elements were done.
inline constexpr std::size_t kBlockVectors = 128;

template <class L>
std::size_t power_block(const Tables<L>& tables, const float* x, const float* y, float* z, std::size_t n,
                        std::uint32_t* special_at, std::size_t& specials) {
  constexpr std::size_t lanes = L::kLanes;
  const Tables<L> t = tables;  // a copy no store to z can alias: it stays in registers
  const auto log_of = [&](std::size_t e) { return log_part<L>(t, L::load(x + e), L::load(y + e)); };
  const auto finish = [&](const LogPart<L>& l, std::size_t e) {
    typename L::Mask special;
    const typename L::F c = exp_part<L>(t, l, special);
    if (L::any(special))  // left whole to power_array, which reads x and y again (z may be one of them)
      special_at[specials++] = static_cast<std::uint32_t>(e);
    else
      L::store(z + e, c);
  };
  if (n < lanes) return 0;
  LogPart<L> next = log_of(0);
  std::size_t e = 0;
  for (; e + 3 * lanes <= n; e += 2 * lanes) {
    for (std::size_t line = 0; line < 2 * lanes; line += 16) {  // 16 floats a 64-byte line
      _mm_prefetch(reinterpret_cast<const char*>(x + e + line + 512), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(y + e + line + 512), _MM_HINT_T0);
    }
    const LogPart<L> second = log_of(e + lanes);
    finish(next, e);
    next = log_of(e + 2 * lanes);
    finish(second, e + lanes);
  }
  if (e + 2 * lanes <= n) {
    const LogPart<L> second = log_of(e + lanes);
    finish(next, e);
    next = second;
    e += lanes;
  }
  finish(next, e);
  return e + lanes;
}

template <class L, class Slow>
std::size_t power_array(const Tables<L>& t, const float* x, const float* y, float* z, std::size_t n, Slow slow) {
  constexpr std::size_t block = kBlockVectors * L::kLanes;
  std::uint32_t special_at[kBlockVectors];
  std::size_t done = 0;
  while (n - done >= L::kLanes) {
    const std::size_t m = n - done < block ? n - done : block;
    std::size_t specials = 0;
    const std::size_t did = power_block<L>(t, x + done, y + done, z + done, m, special_at, specials);
    for (std::size_t s = 0; s < specials; ++s) {
      const std::size_t e = done + special_at[s];
      const typename L::F xs = L::load(x + e), ys = L::load(y + e);
      typename L::Mask special;
      const typename L::F c = exp_part<L>(t, log_part<L>(t, xs, ys), special);
      L::store(z + e, slow(xs, ys, c, special));
    }
    done += did;
    if (did < m) break;
  }
  return done;
}

}  // namespace miniapp::simd::powff

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif
