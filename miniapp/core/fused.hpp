#pragma once
// a b + c rounded once, in every space's code: CUDA's intrinsic in its device code, the
// compiler's builtin elsewhere (HIP's device code, hosts), which is one instruction where the
// target has one and libm's exact fma where it has not.
//
// MINIAPP_FUSED_IN_HARDWARE: 1 where the code being compiled has that instruction (device code;
// x86 hosts built with FMA, as x86-64-v3 and later; AArch64). Code that wants the fused form only
// where it costs what the plain one costs tests it.

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define MINIAPP_FUSED_IN_HARDWARE 1
#else
#define MINIAPP_FUSED_IN_HARDWARE 0
#endif

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace miniapp {

template <class Scalar>
KOKKOS_FORCEINLINE_FUNCTION Scalar fused(Scalar a, Scalar b, Scalar c) {
  static_assert(std::is_same<Scalar, float>::value || std::is_same<Scalar, double>::value, "float or double");
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same<Scalar, float>::value) return __fmaf_rn(a, b, c);
  else return __fma_rn(a, b, c);
#else
  if constexpr (std::is_same<Scalar, float>::value) return __builtin_fmaf(a, b, c);
  else return __builtin_fma(a, b, c);
#endif
}

}  // namespace miniapp
