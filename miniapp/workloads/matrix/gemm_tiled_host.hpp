#pragma once
// gemm-tiled's host side: the packing of A's and B's slices from raw rows, the micro-kernel in
// explicit vectors that adds its block straight into C, and the L2 size that picks the tiles.
// The kernel itself, and the forms every space runs: gemm_tiled.hpp.

#include "miniapp/core/host_simd.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

#include <unistd.h>

// GCC vectorizes the micro-kernel's k loop itself (a reduction over k into the register block),
// which reverses every B row and A column with permutes and is slower than the block vectorized
// on its own (docs/tuning-notes.md). Passing the panel pointer through an empty asm statement
// makes each step's loads opaque to that, and costs nothing. Host compilers only: device passes
// and other compilers get a no-op.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#define MINIAPP_OPAQUE_POINTER(p) asm("" : "+r"(p))
#else
#define MINIAPP_OPAQUE_POINTER(p) (void)(p)
#endif

namespace miniapp::matrix {

inline constexpr int kCacheLine = 64;  // bytes

// The host's packing, one thread per team: the same panels as pack_a and pack_b (k_stride RM and
// RN), from raw row pointers of the LayoutRight matrices and only the `depth` columns of k the
// micro-kernel reads. The generic forms above cost a third of the host GEMM's time (a View index
// and a bounds check per element, with the views' pointers reloaded each time); these are loads,
// a multiply and contiguous stores, and copies of whole RN-wide rows of B. Rows from i0 + TM on
// (the next tile's, where TM is no multiple of RM) are packed as zeros.
template <int RM, class Scalar, class AView>
KOKKOS_INLINE_FUNCTION void pack_a_host(const Scalar alpha, const AView& A, const int i0, const int k0, const int TM,
                                        const int depth, Scalar* const ap, const int panel_stride) {
  static_assert(std::is_same<typename AView::array_layout, Kokkos::LayoutRight>::value, "rows are contiguous");
  const int M = i0 + TM < static_cast<int>(A.extent(0)) ? i0 + TM : static_cast<int>(A.extent(0));
  const std::size_t row_stride = A.stride(0);
  const Scalar* const a0 = A.data() + k0;
  for (int p = 0; p < (TM + RM - 1) / RM; ++p) {
    Scalar* const panel = ap + p * panel_stride;
    const int first = i0 + p * RM;
    const Scalar* rows[RM];
    for (int r = 0; r < RM; ++r) rows[r] = a0 + std::size_t(first + r < M ? first + r : 0) * row_stride;
    if (first + RM <= M) {
      for (int kk = 0; kk < depth; ++kk)
        for (int r = 0; r < RM; ++r) panel[kk * RM + r] = alpha * rows[r][kk];
    } else {
      for (int kk = 0; kk < depth; ++kk)
        for (int r = 0; r < RM; ++r) panel[kk * RM + r] = first + r < M ? alpha * rows[r][kk] : Scalar(0);
    }
  }}

// Columns from j0 + TN on (the next tile's, where TN is no multiple of RN) are packed as zeros.
template <int RN, class Scalar, class BView>
KOKKOS_INLINE_FUNCTION void pack_b_host(const BView& B, const int k0, const int j0, const int TN, const int depth,
                                        Scalar* const bp, const int panel_stride) {
  static_assert(std::is_same<typename BView::array_layout, Kokkos::LayoutRight>::value, "rows are contiguous");
  const int N = j0 + TN < static_cast<int>(B.extent(1)) ? j0 + TN : static_cast<int>(B.extent(1));
  const std::size_t row_stride = B.stride(0);
  for (int kk = 0; kk < depth; ++kk) {
    const Scalar* const row = B.data() + std::size_t(k0 + kk) * row_stride;
    for (int q = 0; q < (TN + RN - 1) / RN; ++q) {
      Scalar* const dst = bp + q * panel_stride + kk * RN;
      const int j = j0 + q * RN;
      if (j + RN <= N) {
        for (int c = 0; c < RN; ++c) dst[c] = row[j + c];
      } else {
        for (int c = 0; c < RN; ++c) dst[c] = j + c < N ? row[j + c] : Scalar(0);
      }
    }
  }
}

// Bytes of one core's L2 cache, 0 where the system does not say (glibc reads it from cpuid).
inline long host_l2_bytes() {
#if defined(_SC_LEVEL2_CACHE_SIZE)
  static const long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return bytes > 0 ? bytes : 0;
#else
  return 0;
#endif
}


#if MINIAPP_HOST_SIMD
// The micro-kernel's k loop four steps a turn on AVX2: a step there is 12 FMAs, and the loop's own
// instructions between them kept a core at about half its FMA rate (docs/tuning-notes.md).
// AVX-512's 24 FMAs a step, and SSE2 (not measured), run as they were.
#if defined(__AVX2__) && !defined(__AVX512F__)
#define MINIAPP_HOST_GEMM_UNROLL _Pragma("GCC unroll 4")
#else
#define MINIAPP_HOST_GEMM_UNROLL
#endif

// Where the host's micro-kernel puts its block, rows x cols of C from `c` on: C = start + the
// product, start being zero or beta * C0 (the first k slice; C0 not read where beta is 0, as in
// BLAS) or C itself (the later slices).
enum class BlockStart { zero, scaled_c0, c };

template <class Scalar>
struct HostBlock {
  Scalar* c;
  std::size_t c_stride;  // between C's rows
  const Scalar* c0;      // the same element of C0, where start is scaled_c0
  std::size_t c0_stride;
  Scalar beta;
  BlockStart start;
  int rows, cols;  // RM x RN but at the matrix's and the tile's edges
};

// The host's micro-kernel: the panels' product with each row of the block held as explicit
// vectors of the ISA's width. GCC vectorizes plain loops at 256 bits on AVX-512 machines (the
// default of -mprefer-vector-width there), where an 8-row float64 block then needs 32 registers
// and spills; vectors of 64 bytes keep it in 24 of AVX-512's 32. The first k steps each ask for
// one cache line of the C block (prefetchw; a team's C, revisited once per k slice, has left the
// caches by then): faster than all of them before the loop and than spreading them over all the
// steps (docs/tuning-notes.md). A whole block goes from the registers to C in vectors.
template <class Scalar, int RM, int RN>
inline void multiply_into_c_host(const Scalar* a, const Scalar* b, const int depth, const int a_k_stride,
                                 const int b_k_stride, const HostBlock<Scalar>& out) {
  constexpr int W = simd::kHostVectorBytes / static_cast<int>(sizeof(Scalar));
  constexpr int NV = RN / W;
  static_assert(RN % W == 0, "a block row is whole vectors");
  constexpr int kLine = kCacheLine / static_cast<int>(sizeof(Scalar));
  constexpr int kRowLines = RN / kLine + 1;  // a row that starts inside a line touches one more
  typedef Scalar Vector __attribute__((vector_size(simd::kHostVectorBytes)));
  Vector sum[RM][NV];
  for (int r = 0; r < RM; ++r)
    for (int v = 0; v < NV; ++v) sum[r][v] = Vector{};
  const auto prefetch = [&](const int l) {
    const int r = l / kRowLines, column = l % kRowLines * kLine;
    if (r < out.rows) __builtin_prefetch(out.c + r * out.c_stride + (column < out.cols ? column : out.cols - 1), 1, 3);
  };
  constexpr int kLines = RM * kRowLines;
  MINIAPP_HOST_GEMM_UNROLL
  for (int kk = 0; kk < depth; ++kk) {
    MINIAPP_OPAQUE_POINTER(a);
    if (kk < kLines) prefetch(kk);
    Vector b_row[NV];
    for (int v = 0; v < NV; ++v) __builtin_memcpy(&b_row[v], b + v * W, sizeof(Vector));
    for (int r = 0; r < RM; ++r) {
      const Vector a_value = a[r] - Vector{};  // a[r] in every lane: one broadcast load
      for (int v = 0; v < NV; ++v) sum[r][v] += a_value * b_row[v];
    }
    a += a_k_stride;
    b += b_k_stride;
  }
  if (out.rows == RM && out.cols == RN) {
    for (int r = 0; r < RM; ++r) {
      Scalar* const row = out.c + r * out.c_stride;
      for (int v = 0; v < NV; ++v) {
        Vector start{};
        if (out.start == BlockStart::c) {
          __builtin_memcpy(&start, row + v * W, sizeof(Vector));
        } else if (out.start == BlockStart::scaled_c0) {
          __builtin_memcpy(&start, out.c0 + r * out.c0_stride + v * W, sizeof(Vector));
          start *= out.beta;
        }
        start += sum[r][v];
        __builtin_memcpy(row + v * W, &start, sizeof(Vector));
      }
    }
    return;
  }
  Scalar acc[RM][RN];
  __builtin_memcpy(acc, sum, sizeof(acc));
  for (int r = 0; r < out.rows; ++r)
    for (int c = 0; c < out.cols; ++c) {
      Scalar& element = out.c[r * out.c_stride + c];
      const Scalar start = out.start == BlockStart::c           ? element
                           : out.start == BlockStart::scaled_c0 ? out.beta * out.c0[r * out.c0_stride + c]
                                                                : Scalar(0);
      element = start + acc[r][c];
    }
}
#endif

}  // namespace miniapp::matrix
