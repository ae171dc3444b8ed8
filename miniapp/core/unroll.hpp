#pragma once
// MINIAPP_UNROLL before a loop with a compile-time trip count: unrolled, so that an array it
// indexes stays in registers and its iterations' loads can be issued together.

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define MINIAPP_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define MINIAPP_UNROLL _Pragma("GCC unroll 16")
#else
#define MINIAPP_UNROLL
#endif
