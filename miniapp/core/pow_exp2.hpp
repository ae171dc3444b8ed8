#pragma once
// float x ** y for every space, written for GPUs: the logarithm of the host's register-table
// power (host_powf_float.hpp's reduce and poly, step for step, on the same constants, so the same
// bits), w = y log2 x as a pair w_hi + w_lo as there, and then the space's own exp2 of w_hi times
// 1 + w_lo ln2 in place of the host's table exponential. On a GPU exp2f is the hardware's
// approximation, a handful of instructions where the vendor's powf spends a third of its own on
// a float-float exponential and its special cases; the logarithm's table is one 16-byte load an
// element (LogEntry). exp2f's documented error: CUDA 2 ulp over the full range (the Programming
// Guide's table of single-precision functions, "from extensive but not exhaustive tests"); HIP
// 1 ulp against the host's exp2f, measured on [-10, 10] only (ROCm's HIP math API reference), so
// on HIP the wider w here rests on unit.hip, not yet run on an AMD GPU. Error: w to about 2^-30
// absolute, so the result is within exp2f's error plus the final rounding, i.e. under 2.5 ulp on
// CUDA and 1.5 elsewhere (the workload verifies to 8 eps). Operands outside the fast path (x not
// a positive normal float, |w| from 125.9375, y not finite) take the space's pow.
//
// The arithmetic must round as written: a product fused into the sum that consumes it breaks the
// exact pairs (Fast2Sum, the error terms), and nvcc and clang (HIP) contract by default, so every
// operation here is written as an fma (namespace exact).

#include "miniapp/core/fused.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/pow_float_constants.hpp"

#include <cstdint>
#include <cstring>

namespace miniapp::pow_exp2 {

// One subinterval's entries of the logarithm's tables, loaded at once.
struct alignas(16) LogEntry {
  float inverse, high, low, unused;  // 1/c; -log2(1/c) = high + low
};

// The 16 entries in the memory of Space, filled from the constants.
template <class Space>
Kokkos::View<LogEntry[16], typename Space::memory_space> log_table(const Space& space) {
  namespace v = simd::powff::table_values;
  Kokkos::View<LogEntry[16], typename Space::memory_space> table("pow_exp2::log_table");
  auto host = Kokkos::create_mirror_view(table);
  for (int i = 0; i < 16; ++i) host(i) = LogEntry{v::inverse[i], v::log_high[i], v::log_low[i], 0.0f};
  Kokkos::deep_copy(space, table, host);
  space.fence();
  return table;
}

namespace exact {
// Every operation a single fma, which no compiler splits or fuses further: a b + (-0), a + b,
// a - b, each rounded once as written, signed zeros included.
KOKKOS_FORCEINLINE_FUNCTION float fma(float a, float b, float c) { return fused(a, b, c); }
KOKKOS_FORCEINLINE_FUNCTION float mul(float a, float b) { return fma(a, b, -0.0f); }
KOKKOS_FORCEINLINE_FUNCTION float add(float a, float b) { return fma(a, 1.0f, b); }
KOKKOS_FORCEINLINE_FUNCTION float sub(float a, float b) { return fma(b, -1.0f, a); }
KOKKOS_FORCEINLINE_FUNCTION std::int32_t bits(float v) {
  std::int32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
KOKKOS_FORCEINLINE_FUNCTION float from_bits(std::int32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}
}  // namespace exact

// log2 x = h + lo_big + lo_rest (host_powf_float.hpp's LogPart); special: x is not a positive
// normal finite float (the parts are then meaningless).
struct Logarithm {
  float h, lo_big, lo_rest;
  bool special;
};

KOKKOS_INLINE_FUNCTION Logarithm log2_parts(const LogEntry* table, const float x) {
  namespace c = simd::powff::coefficients;
  using namespace exact;
  // reduce: x = 2^k z, the subinterval's entries, r = rh + e exactly
  const std::int32_t ix = bits(x);
  const std::uint32_t offset = static_cast<std::uint32_t>(ix) - static_cast<std::uint32_t>(simd::powff::kSplit);
  const std::uint32_t k_bits = offset & 0xff800000u;
  const float z = from_bits(static_cast<std::int32_t>(static_cast<std::uint32_t>(ix) - k_bits));
  const bool special = static_cast<std::int32_t>(static_cast<std::uint32_t>(ix) + 0x7f800000u) >
                       static_cast<std::int32_t>(0xfeffffffu);
  const LogEntry entry = table[(offset >> simd::powff::kIndexShift) & 15u];
  const float k23 = static_cast<float>(static_cast<std::int32_t>(k_bits));  // k 2^23, exact
  const float p = mul(z, entry.inverse);
  const float e = fma(z, entry.inverse, -p);
  const float rh = sub(p, 1.0f);
  const float b = fma(k23, 0x1p-23f, entry.high);
  // poly: the same pairs and terms as the host's
  const float rh2 = mul(rh, rh);
  const float q = fma(fma(fma(c::c7, rh, c::c6), rh, c::c5), rh, c::c4);
  const float a = fma(c::c3h, rh, c::c2h);
  const float a_lo = fma(c::c3h, rh, sub(c::c2h, a));
  const float s_hi = fma(rh, a, c::c1h);
  const float s_lo = fma(rh, a, sub(c::c1h, s_hi));
  const float l_hi = mul(rh, s_hi);
  const float l_err = fma(rh, s_hi, -l_hi);
  const float e_first = fma(-c::c1h, rh, c::c1h);
  const float e_factor = fma(rh2, e_first, e_first);
  const float low_terms = fma(rh2, c::c2l, fma(rh, c::c1l, entry.low));
  const float lo_big = fma(mul(rh2, rh2), q, fma(e, e_factor, low_terms));
  const float lo_small = fma(rh2, a_lo, fma(rh, s_lo, l_err));
  const float h = add(b, l_hi);
  const float h_lo = sub(l_hi, sub(h, b));
  return {h, lo_big, add(h_lo, lo_small), special};
}

// x ** y: 2^w_hi (1 + w_lo ln2) on the fast path, the space's pow elsewhere.
KOKKOS_INLINE_FUNCTION float pow(const LogEntry* table, const float x, const float y) {
  using namespace exact;
  const Logarithm l = log2_parts(table, x);
  const float wh = mul(y, l.h);
  const float wh_err = fma(y, l.h, -wh);
  const float w_hi = fma(y, l.lo_big, wh);
  const float w_lo = add(fma(y, l.lo_big, sub(wh, w_hi)), fma(y, l.lo_rest, wh_err));
  // |w_hi| from 125.9375 (or NaN: y not finite, or x = 1 with y infinite) as the host's bound
  if (l.special || (bits(w_hi) & 0x7fffffff) > 0x42fbdfff) return compat::math::pow(x, y);
  const float power = compat::math::exp2(w_hi);
  return fma(power, mul(w_lo, simd::powff::coefficients::ln2), power);
}

}  // namespace miniapp::pow_exp2
