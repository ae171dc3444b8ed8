#pragma once
// The constants of the float power's logarithm and exponential (the steps and their error
// bounds: host_powf_float.hpp): the split of x's range, the tables' values and the polynomial
// coefficients. Shared by the host's register-table power and the portable power of
// pow_exp2.hpp, which takes its logarithm step for step from the host's. Plain constants, so
// device code reads them too.

#include <cstdint>

namespace miniapp::simd::powff {

inline constexpr std::int32_t kSplit = 0x3f330000;  // the bits of 0.69921875, where z's range starts
inline constexpr int kIndexShift = 23 - 4;            // 16 subintervals: the top 4 bits of z - split

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

}  // namespace miniapp::simd::powff
