#pragma once
// pow over arrays on the host through glibc's vector math library (libmvec): the vector variant
// for the widest ISA this unit is compiled for (AVX-512: 16 floats, AVX2/AVX: 8, SSE: 4), the
// variants GCC itself calls under -ffast-math. Scalar powf runs one element per call; two
// threads of it lose to NumPy's single-threaded SIMD power. libmvec handles every special input
// (zero, negative, infinite, NaN) as pow does, within 4 ulp (glibc's manual). Float on AVX-512
// and on AVX2 with FMA takes the register-table power of host_powf_float.hpp instead (libmvec's
// gathers bounded it), with libmvec for the lanes it leaves, and
// prefetches x and y: the call-free loop reached its loads before the hardware prefetcher had
// them (docs/performance.md has the times).
//
// MINIAPP_HOST_VECTOR_POW is 1 where the build links libmvec (MINIAPP_HAVE_LIBMVEC, set by the
// top-level CMakeLists.txt on x86-64 glibc) and this is a host-compiler build (MINIAPP_HOST_SIMD:
// nvcc and hipcc refuse the vector types in kernel bodies, so their host spaces keep std::pow).

#include "miniapp/core/host_simd.hpp"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>

#if MINIAPP_HOST_SIMD && defined(MINIAPP_HAVE_LIBMVEC) && MINIAPP_HAVE_LIBMVEC && defined(__x86_64__)
#define MINIAPP_HOST_VECTOR_POW 1
#else
#define MINIAPP_HOST_VECTOR_POW 0
#endif

#if MINIAPP_HOST_VECTOR_POW
#include "miniapp/core/host_powf_float.hpp"

namespace miniapp::simd::mvec {
#if defined(__AVX512F__)
inline constexpr int kVectorBytes = 64;
#elif defined(__AVX__)
inline constexpr int kVectorBytes = 32;
#else
inline constexpr int kVectorBytes = 16;
#endif
typedef float Floats __attribute__((vector_size(kVectorBytes)));
typedef double Doubles __attribute__((vector_size(kVectorBytes)));
}  // namespace miniapp::simd::mvec

// The x86-64 vector function ABI names: _ZGV, ISA (b SSE, c AVX, d AVX2, e AVX-512), N (no mask),
// lanes, vv (two vector arguments).
extern "C" {
#if defined(__AVX512F__)
miniapp::simd::mvec::Floats _ZGVeN16vv_powf(miniapp::simd::mvec::Floats, miniapp::simd::mvec::Floats);
miniapp::simd::mvec::Doubles _ZGVeN8vv_pow(miniapp::simd::mvec::Doubles, miniapp::simd::mvec::Doubles);
#elif defined(__AVX2__)
miniapp::simd::mvec::Floats _ZGVdN8vv_powf(miniapp::simd::mvec::Floats, miniapp::simd::mvec::Floats);
miniapp::simd::mvec::Doubles _ZGVdN4vv_pow(miniapp::simd::mvec::Doubles, miniapp::simd::mvec::Doubles);
#elif defined(__AVX__)
miniapp::simd::mvec::Floats _ZGVcN8vv_powf(miniapp::simd::mvec::Floats, miniapp::simd::mvec::Floats);
miniapp::simd::mvec::Doubles _ZGVcN4vv_pow(miniapp::simd::mvec::Doubles, miniapp::simd::mvec::Doubles);
#else
miniapp::simd::mvec::Floats _ZGVbN4vv_powf(miniapp::simd::mvec::Floats, miniapp::simd::mvec::Floats);
miniapp::simd::mvec::Doubles _ZGVbN2vv_pow(miniapp::simd::mvec::Doubles, miniapp::simd::mvec::Doubles);
#endif
}

namespace miniapp::simd {

namespace mvec {
inline Floats pow(Floats x, Floats y) {
#if defined(__AVX512F__)
  return _ZGVeN16vv_powf(x, y);
#elif defined(__AVX2__)
  return _ZGVdN8vv_powf(x, y);
#elif defined(__AVX__)
  return _ZGVcN8vv_powf(x, y);
#else
  return _ZGVbN4vv_powf(x, y);
#endif
}
inline Doubles pow(Doubles x, Doubles y) {
#if defined(__AVX512F__)
  return _ZGVeN8vv_pow(x, y);
#elif defined(__AVX2__)
  return _ZGVdN4vv_pow(x, y);
#elif defined(__AVX__)
  return _ZGVcN4vv_pow(x, y);
#else
  return _ZGVbN2vv_pow(x, y);
#endif
}
}  // namespace mvec

// The register-table power at the build's widest width.
#if defined(__AVX512F__) && defined(__FMA__)
#define MINIAPP_REGISTER_TABLE_POW 1
using PowLanes = powff::Avx512;
#elif defined(__AVX2__) && defined(__FMA__)
#define MINIAPP_REGISTER_TABLE_POW 1
using PowLanes = powff::Avx2;
#else
#define MINIAPP_REGISTER_TABLE_POW 0
#endif

// z[e] = pow(x[e], y[e]) for e in [0, n); a tail shorter than a vector is padded with ones.
template <class Scalar>
void pow(const Scalar* x, const Scalar* y, Scalar* z, std::size_t n) {
  using Vector = std::conditional_t<sizeof(Scalar) == 4, mvec::Floats, mvec::Doubles>;
  constexpr std::size_t lanes = mvec::kVectorBytes / sizeof(Scalar);
  std::size_t e = 0;
#if MINIAPP_REGISTER_TABLE_POW
  if constexpr (sizeof(Scalar) == 4) {
    // Float x ** y over the whole vectors of the array, the lanes it leaves by libmvec (the
    // width's register type is mvec::Floats).
    static const powff::Tables<PowLanes> tables = powff::make_tables<PowLanes>();
    e = powff::power_array(tables, x, y, z, n, [](auto a, auto b, auto c, auto special) {
      return PowLanes::select(special, mvec::pow(a, b), c);
    });
  }
#endif
  for (; e + lanes <= n; e += lanes) {
    Vector a, b;
    std::memcpy(&a, x + e, sizeof(a));
    std::memcpy(&b, y + e, sizeof(b));
    const Vector c = mvec::pow(a, b);
    std::memcpy(z + e, &c, sizeof(c));
  }
  if (e < n) {
    Vector a, b;
    for (std::size_t l = 0; l < lanes; ++l) {
      a[l] = e + l < n ? x[e + l] : Scalar(1);
      b[l] = e + l < n ? y[e + l] : Scalar(1);
    }
    const Vector c = mvec::pow(a, b);
    for (std::size_t l = 0; e + l < n; ++l) z[e + l] = c[l];
  }
}

}  // namespace miniapp::simd
#endif
