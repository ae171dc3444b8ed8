#pragma once
// 16 bytes of values moved as one: on a GPU a Pack16 at a 16-byte-aligned address is one vector
// load or store (ld/st.global.v4.f32, .v2.f64) where the values one by one take four or two
// instructions, each with its own address. Host spaces copy a pack with memcpy, devices through
// their own vector types (below). The caller guarantees the alignment.

#include "miniapp/core/spaces.hpp"

#include <Kokkos_Core.hpp>

#include <cstring>

namespace miniapp {

template <class Scalar>
struct alignas(16) Pack16 {
  static constexpr int kValues = static_cast<int>(16 / sizeof(Scalar));
  Scalar v[kValues];
};

// The device's own 16-byte vector type for Scalar (float4, double2). A store of a Pack16, or of
// a float4, through a pointer cast was one vector instruction or four, as the compiler could
// prove the address aligned (nvcc 13, sm_90: a thread's second pack went out as four stores); on
// CUDA a store is therefore the intrinsic that is one st.global.wb.v4.f32 (.v2.f64), the
// default write-back policy.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define MINIAPP_DEVICE_VECTOR16 1
KOKKOS_FORCEINLINE_FUNCTION float4 device_vector(const Pack16<float>& p) {
  return make_float4(p.v[0], p.v[1], p.v[2], p.v[3]);
}
KOKKOS_FORCEINLINE_FUNCTION double2 device_vector(const Pack16<double>& p) { return make_double2(p.v[0], p.v[1]); }
KOKKOS_FORCEINLINE_FUNCTION Pack16<float> pack_of(const float4 v) { return {{v.x, v.y, v.z, v.w}}; }
KOKKOS_FORCEINLINE_FUNCTION Pack16<double> pack_of(const double2 v) { return {{v.x, v.y}}; }
#else
#define MINIAPP_DEVICE_VECTOR16 0
#endif

template <class Space, class Scalar>
KOKKOS_FORCEINLINE_FUNCTION Pack16<Scalar> load_pack(const Scalar* from) {
  if constexpr (is_host_space<Space>()) {
    Pack16<Scalar> p;
    std::memcpy(&p, from, sizeof p);
    return p;
  } else {
#if MINIAPP_DEVICE_VECTOR16
    using Vector = decltype(device_vector(Pack16<Scalar>{}));
    return pack_of(*reinterpret_cast<const Vector*>(from));
#else
    return *reinterpret_cast<const Pack16<Scalar>*>(from);
#endif
  }
}

template <class Space, class Scalar>
KOKKOS_FORCEINLINE_FUNCTION void store_pack(Scalar* to, const Pack16<Scalar>& p) {
  if constexpr (is_host_space<Space>()) {
    std::memcpy(to, &p, sizeof p);
  } else {
#if MINIAPP_DEVICE_VECTOR16 && defined(__CUDA_ARCH__)
    __stwb(reinterpret_cast<decltype(device_vector(p))*>(to), device_vector(p));  // st.global.wb.v4.f32 / .v2.f64
#elif MINIAPP_DEVICE_VECTOR16
    *reinterpret_cast<decltype(device_vector(p))*>(to) = device_vector(p);
#else
    *reinterpret_cast<Pack16<Scalar>*>(to) = p;
#endif
  }
}

}  // namespace miniapp
