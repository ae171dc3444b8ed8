#pragma once
// Host SIMD: the register width of the host ISA, and a pack of Scalars that one host SIMD
// instruction works on (GCC/Clang vector extensions), for host kernels that must be vectorised
// by hand: where a kernel mixes a row's dot product, its
// horizontal sum and an update, compilers' own vectorisation of the generic loops leaves it
// compute-bound.
//
// The pack only in host-compiler builds: nvcc refuses vector types in __host__ __device__ functions, which
// every Kokkos kernel body is, so CUDA and HIP builds define MINIAPP_HOST_SIMD 0 and their host
// spaces take the portable kernels. GCC >= 12 and Clang provide __builtin_shufflevector.

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && !defined(__HIPCC__) && \
    defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define MINIAPP_HOST_SIMD 1
#endif
#endif
#ifndef MINIAPP_HOST_SIMD
#define MINIAPP_HOST_SIMD 0
#endif

#if MINIAPP_HOST_SIMD && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define MINIAPP_HOST_STREAM_STORES 1
#else
#define MINIAPP_HOST_STREAM_STORES 0
#endif

#include <cstdint>

namespace miniapp::simd {

// Bytes of one SIMD register of the host ISA this file is compiled for, in every build: host
// kernels written in plain loops size their register blocks by it.
#if defined(__AVX512F__)
inline constexpr int kHostVectorBytes = 64;
#elif defined(__AVX__)
inline constexpr int kHostVectorBytes = 32;
#else
inline constexpr int kHostVectorBytes = 16;  // SSE2, what -O3 alone targets on x86-64
#endif
// How many of those registers the ISA has: AVX-512 doubled them to 32; SSE2 and AVX/AVX2 have 16.
#if defined(__AVX512F__)
inline constexpr int kHostVectorRegisters = 32;
#else
inline constexpr int kHostVectorRegisters = 16;
#endif

#if MINIAPP_HOST_SIMD
// 32 bytes whatever kHostVectorBytes is: one AVX register; two SSE2 registers where the build
// targets no AVX, half an AVX-512 register where it does (the kernels' register blocking is
// sized for 16 of them, and transpose_sum is written for 8 and 4 lanes).
inline constexpr int kPackBytes = 32;

template <class Scalar>
struct Pack {
  static_assert(sizeof(Scalar) == 4 || sizeof(Scalar) == 8, "float or double");
  static constexpr int width = kPackBytes / static_cast<int>(sizeof(Scalar));
  typedef Scalar type __attribute__((vector_size(kPackBytes)));

  // Unaligned: rows of a matrix start wherever the row length puts them.
  static type load(const Scalar* p) {
    type v;
    __builtin_memcpy(&v, p, sizeof(v));
    return v;
  }
  static void store(Scalar* p, const type& v) { __builtin_memcpy(p, &v, sizeof(v)); }

  // Lanes [width - count, width) of one, the others zero: the last `count` elements of a load
  // that ends at a row's end.
  static type last_lanes(int count) {
    type m;
    for (int l = 0; l < width; ++l) m[l] = l >= width - count ? Scalar(1) : Scalar(0);
    return m;
  }

  // Halves added pairwise: a loop over the lanes is one chain of width - 1 dependent additions.
  static Scalar sum(const type& v) {
    if constexpr (width == 8) {
      const auto h = __builtin_shufflevector(v, v, 0, 1, 2, 3) + __builtin_shufflevector(v, v, 4, 5, 6, 7);
      // Lanes 0 and 1: h0 + h2 and h1 + h3, in a 4-lane vector: GCC 12 moved a 2-lane float
      // vector through the stack (a store and a reload in the chain of every row's dot product).
      const auto q = h + __builtin_shufflevector(h, h, 2, 3, 0, 1);
      return q[0] + q[1];
    } else {
      const auto h = __builtin_shufflevector(v, v, 0, 1) + __builtin_shufflevector(v, v, 2, 3);
      return h[0] + h[1];
    }
  }

  // rows[0..width) -> the pack whose lane l is the sum of rows[l]'s lanes: a transpose and add
  // in log2(width) shuffle stages, instead of width horizontal sums.
  static type transpose_sum(const type* rows) {
    if constexpr (width == 8) {
      auto pairs = [](const type& p, const type& q) {
        return __builtin_shufflevector(p, q, 0, 2, 8, 10, 4, 6, 12, 14) +
               __builtin_shufflevector(p, q, 1, 3, 9, 11, 5, 7, 13, 15);
      };
      const type q0 = pairs(pairs(rows[0], rows[1]), pairs(rows[2], rows[3]));  // rows 0-3: low, high halves
      const type q1 = pairs(pairs(rows[4], rows[5]), pairs(rows[6], rows[7]));
      return __builtin_shufflevector(q0, q1, 0, 1, 2, 3, 8, 9, 10, 11) +
             __builtin_shufflevector(q0, q1, 4, 5, 6, 7, 12, 13, 14, 15);
    } else {
      const type h01 = __builtin_shufflevector(rows[0], rows[1], 0, 4, 2, 6) +
                       __builtin_shufflevector(rows[0], rows[1], 1, 5, 3, 7);  // r0 lo, r1 lo, r0 hi, r1 hi
      const type h23 = __builtin_shufflevector(rows[2], rows[3], 0, 4, 2, 6) +
                       __builtin_shufflevector(rows[2], rows[3], 1, 5, 3, 7);
      return __builtin_shufflevector(h01, h23, 0, 1, 4, 5) + __builtin_shufflevector(h01, h23, 2, 3, 6, 7);
    }
  }
};
#endif

#if MINIAPP_HOST_STREAM_STORES
// dst[0, count) = src[0, count), the aligned part with non-temporal stores of the widest register
// the build has: the lines go to memory without being read first (a plain store reads each line
// before it writes it, which costs an output stream that no cache holds half its bandwidth).
// Only for outputs that are not read again soon; stream_fence() before another thread reads them.
template <class Scalar>
void stream_copy(Scalar* dst, const Scalar* src, const std::int64_t count) {
  static_assert(sizeof(Scalar) == 4 || sizeof(Scalar) == 8, "float or double");
  constexpr std::int64_t kAlign = kHostVectorBytes, kLanes = kHostVectorBytes / sizeof(Scalar);
  std::int64_t j = 0;
  while (j < count && reinterpret_cast<std::uintptr_t>(dst + j) % kAlign != 0) {
    dst[j] = src[j];
    ++j;
  }
  for (; j + kLanes <= count; j += kLanes) {
    if constexpr (sizeof(Scalar) == 4) {
#if defined(__AVX512F__)
      _mm512_stream_ps(reinterpret_cast<float*>(dst + j), _mm512_loadu_ps(reinterpret_cast<const float*>(src + j)));
#elif defined(__AVX__)
      _mm256_stream_ps(reinterpret_cast<float*>(dst + j), _mm256_loadu_ps(reinterpret_cast<const float*>(src + j)));
#else
      _mm_stream_ps(reinterpret_cast<float*>(dst + j), _mm_loadu_ps(reinterpret_cast<const float*>(src + j)));
#endif
    } else {
#if defined(__AVX512F__)
      _mm512_stream_pd(reinterpret_cast<double*>(dst + j), _mm512_loadu_pd(reinterpret_cast<const double*>(src + j)));
#elif defined(__AVX__)
      _mm256_stream_pd(reinterpret_cast<double*>(dst + j), _mm256_loadu_pd(reinterpret_cast<const double*>(src + j)));
#else
      _mm_stream_pd(reinterpret_cast<double*>(dst + j), _mm_loadu_pd(reinterpret_cast<const double*>(src + j)));
#endif
    }
  }
  for (; j < count; ++j) dst[j] = src[j];
}

// Orders this thread's non-temporal stores before its later stores (the end of a kernel).
inline void stream_fence() { _mm_sfence(); }
#endif

}  // namespace miniapp::simd
