#pragma once
// C = alpha*A*B + beta*C0, the hand-tuned form: one team per TM x TN tile of C. For each TK-deep
// slice of K the team packs alpha*A and B into scratch as register-block panels (zero-padded
// past the matrix edges, so the micro-kernel has no bounds checks), then each thread multiplies
// RM x RN blocks of C held in registers, with k outermost and contiguous loads of RN values of B
// that the compiler vectorizes.
//
// The same kernel runs on every space; only the tile sizes, the team size and the order of the
// packed panels differ (per-space defaults in default_tiles()):
// - host: one thread per team; each panel is contiguous over its whole k range, so a B panel
//   stays in L1 while the thread sweeps the A panels of the tile (the GotoBLAS packing), packed
//   from raw row pointers (pack_a_host, pack_b_host);
// - GPU: one thread per register block; panels interleaved k-major, so the threads of a warp
//   read consecutive scratch words (no bank conflicts) while they share a k.

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/host_simd.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/workloads/matrix/params.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <unistd.h>

namespace miniapp::matrix {

struct TileShape {
  int m = 0, n = 0, k = 0;
};

// Rows x columns of C one thread keeps in registers. Host: rows of two SIMD registers each: 4 rows
// (8 accumulators) of the 16 registers SSE2/AVX2 have; on AVX-512's 32, 8 rows where the block is
// written in explicit vectors (MINIAPP_HOST_SIMD; GCC's own code for an 8-row float64 block ran
// several times slower), and in float64 three registers per row (24 accumulators: 8 broadcasts
// and 3 loads feed 24 FMAs; float32's B panel would then fill L1). A wider block spills on SSE2
// (docs/tuning-notes.md). GPU: fixed (the host ISA must not change what device code is compiled).
template <class Scalar, class Space>
struct RegisterBlock {
  static constexpr bool wide = is_host_space<Space>() && simd::kHostVectorRegisters >= 32 &&
                               (sizeof(Scalar) == 4 || MINIAPP_HOST_SIMD);
  static constexpr int rows = wide ? 8 : 4;
  static constexpr int vectors = wide && MINIAPP_HOST_SIMD && sizeof(Scalar) == 8 ? 3 : 2;
  static constexpr int cols = is_host_space<Space>() ? vectors * simd::kHostVectorBytes / static_cast<int>(sizeof(Scalar))
                                                     : (sizeof(Scalar) == 4 ? 8 : 4);
  // Tile rows hold whole blocks; a tile's columns need not (the host's last panel of a tile is
  // clipped to it), but on a GPU they do.
  static_assert(kTileMultiple % rows == 0, "tile multiple must hold a block's rows");
  static_assert(is_host_space<Space>() || kTileMultiple % cols == 0, "tile multiple must hold a GPU block");
};

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

// The team packs alpha * A(i0 .. i0+TM, k0 .. k0+TK) into RM-row panels at `ap`: element (r, kk) at
// (r / RM) * panel_stride + kk * k_stride + r % RM, zero past the matrix's edges. Rows over
// threads, contiguous columns over vector lanes: coalesced reads on a GPU, plain nested loops on
// the host (a flat index would cost a division per element there).
template <int RM, class Member, class Scalar, class AView>
KOKKOS_INLINE_FUNCTION void pack_a(const Member& team, const Scalar alpha, const AView& A, const int i0, const int k0,
                                   const int TM, const int TK, Scalar* const ap, const int panel_stride,
                                   const int k_stride) {
  const int M = static_cast<int>(A.extent(0)), K = static_cast<int>(A.extent(1));
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TM), [&](const int r) {
    const int i = i0 + r;
    Scalar* const row = ap + (r / RM) * panel_stride + r % RM;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, TK), [&](const int kk) {
      const int k = k0 + kk;
      row[kk * k_stride] = (i < M && k < K) ? alpha * A(i, k) : Scalar(0);
    });
  });
}

// The team packs B(k0 .. k0+TK, j0 .. j0+TN) into RN-column panels at `bp`: element (kk, c) at
// (c / RN) * panel_stride + kk * k_stride + c % RN, zero past the matrix's edges.
template <int RN, class Member, class Scalar, class BView>
KOKKOS_INLINE_FUNCTION void pack_b(const Member& team, const BView& B, const int k0, const int j0, const int TK,
                                   const int TN, Scalar* const bp, const int panel_stride, const int k_stride) {
  const int K = static_cast<int>(B.extent(0)), N = static_cast<int>(B.extent(1));
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TK), [&](const int kk) {
    const int k = k0 + kk;
    Scalar* const row = bp + kk * k_stride;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, TN), [&](const int c) {
      const int j = j0 + c;
      row[(c / RN) * panel_stride + c % RN] = (k < K && j < N) ? B(k, j) : Scalar(0);
    });
  });
}

// The host's packing, one thread per team: the same panels as pack_a and pack_b (k_stride RM and
// RN), from raw row pointers of the LayoutRight matrices and only the `depth` columns of k the
// micro-kernel reads. The generic forms above cost a third of the host GEMM's time (a View index
// and a bounds check per element, with the views' pointers reloaded each time); these are loads,
// a multiply and contiguous stores, and copies of whole RN-wide rows of B.
template <int RM, class Scalar, class AView>
KOKKOS_INLINE_FUNCTION void pack_a_host(const Scalar alpha, const AView& A, const int i0, const int k0, const int TM,
                                        const int depth, Scalar* const ap, const int panel_stride) {
  static_assert(std::is_same<typename AView::array_layout, Kokkos::LayoutRight>::value, "rows are contiguous");
  const int M = static_cast<int>(A.extent(0));
  const std::size_t row_stride = A.stride(0);
  const Scalar* const a0 = A.data() + k0;
  for (int p = 0; p < TM / RM; ++p) {
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

// The tile, its k slice and where the packed slices put element (panel, kk, within):
// panel * panel_stride + kk * k_stride + within.
struct SliceLayout {
  int m, n, k;
  int a_panel_stride, a_k_stride, b_panel_stride, b_k_stride;
};

// The team packs this k slice of A and, with_b, of B, `depth` deep, the host's way (Host:
// is_host_space of the kernel's space) or the portable one. A function, not the kernel's lambda:
// nvcc refuses an extended lambda that first captures a variable inside `if constexpr`.
template <bool Host, int RM, int RN, class Member, class Scalar, class AView, class BView>
KOKKOS_INLINE_FUNCTION void pack_slices(const Member& team, const Scalar alpha, const AView& A, const BView& B,
                                        const int tile_i, const int tile_j, const int k0, const int depth,
                                        const bool with_b, const SliceLayout& s, Scalar* const ap, Scalar* const bp) {
  if constexpr (Host) {
    (void)team;
    pack_a_host<RM>(alpha, A, tile_i, k0, s.m, depth, ap, s.a_panel_stride);
    if (with_b) pack_b_host<RN>(B, k0, tile_j, s.n, depth, bp, s.b_panel_stride);
  } else {
    (void)depth;
    pack_a<RM>(team, alpha, A, tile_i, k0, s.m, s.k, ap, s.a_panel_stride, s.a_k_stride);
    if (with_b) pack_b<RN>(team, B, k0, tile_j, s.k, s.n, bp, s.b_panel_stride, s.b_k_stride);
  }
}

// The host asks for the C block's rows before its micro-kernel runs (some thousand cycles), so
// the update after it does not wait on memory: a team's C, revisited once per k slice, has left
// the caches by then. GPUs and nvcc's host passes (MINIAPP_HOST_SIMD 0) skip it.
template <bool Host, int RM, int RN, class CView>
KOKKOS_INLINE_FUNCTION void prefetch_block(const CView& C, const int i0, const int j0, const int rows) {
#if MINIAPP_HOST_SIMD
  if constexpr (Host) {
    for (int r = 0; r < rows; ++r) {
      const auto* row = &C(i0 + r, j0);
      for (int c = 0; c < RN; c += 64 / static_cast<int>(sizeof(*row))) __builtin_prefetch(row + c, 1, 3);
      __builtin_prefetch(row + RN - 1, 1, 3);
    }
  }
#else
  (void)C, (void)i0, (void)j0, (void)rows;
#endif
}

// Row tiles per team on the host: a team takes a run of row tiles of one tile column and, per k
// slice, packs B's slice once for all of them (one tile per team packed B once per row tile:
// at n = 4096, 16 times, 12% of the time with A's packing). The longest run that keeps the
// busiest thread's share of tiles at its minimum, ceil(items / concurrency) x run, so no thread
// idles for longer runs. GPUs keep one tile per team: many small teams.
inline int host_row_run(const int tiles_m, const int tiles_n, const int concurrency) {
  int best = 1;
  long best_share = -1;
  for (int run = 1; run <= tiles_m; ++run) {
    const long items = static_cast<long>(tiles_n) * ((tiles_m + run - 1) / run);
    const long share = (items + concurrency - 1) / concurrency * run;
    if (best_share < 0 || share <= best_share) best = run, best_share = share;
  }
  return best;
}

// The micro-kernel: acc += the RM-row panel a times the RN-column panel b over `depth` values of
// k, a_k_stride and b_k_stride apart, with k outermost and one row of b loaded per step.
template <class Scalar, int RM, int RN>
KOKKOS_INLINE_FUNCTION void multiply_panels(const Scalar* a, const Scalar* b, const int depth, const int a_k_stride,
                                            const int b_k_stride, Scalar (&acc)[RM][RN]) {
  for (int kk = 0; kk < depth; ++kk) {
    MINIAPP_OPAQUE_POINTER(a);
    Scalar a_col[RM], b_row[RN];
    for (int r = 0; r < RM; ++r) a_col[r] = a[r];
    for (int c = 0; c < RN; ++c) b_row[c] = b[c];
    for (int r = 0; r < RM; ++r)
      for (int c = 0; c < RN; ++c) acc[r][c] += a_col[r] * b_row[c];
    a += a_k_stride;
    b += b_k_stride;
  }
}

#if MINIAPP_HOST_SIMD
// The host's micro-kernel: the same product with each row of the block held as explicit vectors
// of the ISA's width. GCC vectorizes plain loops at 256 bits on AVX-512 machines (the default of
// -mprefer-vector-width there), where an 8-row float64 block then needs 32 registers and spills;
// vectors of 64 bytes keep it in 16 of AVX-512's 32.
template <class Scalar, int RM, int RN>
inline void multiply_panels_host(const Scalar* a, const Scalar* b, const int depth, const int a_k_stride,
                                 const int b_k_stride, Scalar (&acc)[RM][RN]) {
  constexpr int W = simd::kHostVectorBytes / static_cast<int>(sizeof(Scalar));
  constexpr int NV = RN / W;
  static_assert(RN % W == 0, "a block row is whole vectors");
  typedef Scalar Vector __attribute__((vector_size(simd::kHostVectorBytes)));
  Vector sum[RM][NV];
  for (int r = 0; r < RM; ++r)
    for (int v = 0; v < NV; ++v) sum[r][v] = Vector{};
  for (int kk = 0; kk < depth; ++kk) {
    MINIAPP_OPAQUE_POINTER(a);
    Vector b_row[NV];
    for (int v = 0; v < NV; ++v) __builtin_memcpy(&b_row[v], b + v * W, sizeof(Vector));
    for (int r = 0; r < RM; ++r) {
      const Vector a_value = a[r] - Vector{};  // a[r] in every lane: one broadcast load
      for (int v = 0; v < NV; ++v) sum[r][v] += a_value * b_row[v];
    }
    a += a_k_stride;
    b += b_k_stride;
  }
  for (int r = 0; r < RM; ++r)
    for (int v = 0; v < NV; ++v) __builtin_memcpy(&acc[r][v * W], &sum[r][v], sizeof(Vector));
}
#endif

// The block's product on this space: the explicit vectors on the host where this build has them.
template <class Space, class Scalar, int RM, int RN>
KOKKOS_INLINE_FUNCTION void multiply_block(const Scalar* a, const Scalar* b, const int depth, const int a_k_stride,
                                           const int b_k_stride, Scalar (&acc)[RM][RN]) {
#if MINIAPP_HOST_SIMD
  if constexpr (is_host_space<Space>()) {
    multiply_panels_host(a, b, depth, a_k_stride, b_k_stride, acc);
    return;
  }
#endif
  multiply_panels(a, b, depth, a_k_stride, b_k_stride, acc);
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

inline constexpr int kCacheLine = 64;

// p rounded up to the next cache line (64 bytes). On host spaces each packed slice is padded by a
// line and starts on one: Kokkos 3.4 hands out OpenMP level-1 scratch 48 bytes past a line, and
// every 64-byte load of a packed panel then straddled two lines.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar* to_cache_line(Scalar* const p) {
  constexpr std::uintptr_t line = 64;
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(p);
  return reinterpret_cast<Scalar*>((address + line - 1) / line * line);
}

// The space's tiles for an m x n product, on `concurrency` threads.
// Host: 128 x 256 x 128, both packed slices, (128 + 256) x 128 float64 = 384 KiB, in a core's L2
// and one B panel (TK x RN, 16 KiB at most) in L1: the best of a search on a 512 KiB L2. Where
// the L2 is 2 MiB or more, 256 x 512 x 256 (the A slice, 512 KiB, in a quarter of it, the B panel
// 32 KiB of 48 KiB of L1), which packs A and B half as often per flop and was the best of a search
// there at n = 1024 and 4096; only while the product still gives every thread two tiles.
// GPU: 32 x 64 tiles of C (64 lanes per team in float32, 128 in float64: many small teams),
// and as deep a k slice as 24 KiB of scratch holds, (32 + 64) x TK scalars: TK 64 in float32,
// 32 in float64 (the H100 search that chose them). The searches: docs/tuning-notes.md.
template <class Scalar, class Space>
TileShape default_tiles(const std::size_t m, const std::size_t n, const int concurrency) {
  if (!is_host_space<Space>()) return {32, 64, static_cast<int>(256 / sizeof(Scalar))};
  const TileShape large{256, 512, 256};
  const std::size_t large_tiles = ((m + large.m - 1) / large.m) * ((n + large.n - 1) / large.n);
  if (host_l2_bytes() >= (2L << 20) && large_tiles >= 2 * static_cast<std::size_t>(concurrency)) return large;
  return {128, 256, 128};
}

template <class Scalar, class Space, class AView, class BView, class CView, class C0View, MINIAPP_KERNEL_UNIT>
void gemm_tiled(const Space& space, const TileShape& tiles, Scalar alpha, const AView& A, const BView& B,
                Scalar beta, const C0View& C0, const CView& C) {
  constexpr int RM = RegisterBlock<Scalar, Space>::rows;
  constexpr int RN = RegisterBlock<Scalar, Space>::cols;
  constexpr bool kHost = is_host_space<Space>();
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<Scalar*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  const int M = static_cast<int>(A.extent(0));
  const int K = static_cast<int>(A.extent(1));
  const int N = static_cast<int>(B.extent(1));
  const int TM = tiles.m, TN = tiles.n, TK = tiles.k;
  if (TM % RM != 0 || (!kHost && TN % RN != 0) || TK < 1)
    throw std::invalid_argument("gemm-tiled: tile " + std::to_string(TM) + " x " + std::to_string(TN) +
                                " is not a multiple of the register block");
  const int tiles_m = (M + TM - 1) / TM, tiles_n = (N + TN - 1) / TN;
  const int run = kHost ? host_row_run(tiles_m, tiles_n, std::max(1, static_cast<int>(space.concurrency()))) : 1;
  const int league = (tiles_m + run - 1) / run * tiles_n;
  const int a_panels = TM / RM, b_panels = (TN + RN - 1) / RN;
  const int blocks = a_panels * b_panels;

  // GPU: 8 lanes per thread, one lane per register block up to 256 lanes.
  const int vector_length = kHost ? 1 : 8;
  const int team_size = kHost ? 1 : std::max(1, std::min(blocks, 256) / vector_length);
  // Element (panel, kk, within) of a packed slice lives at panel * panel_stride + kk * k_stride + within.
  const int a_panel_stride = kHost ? TK * RM : RM, a_k_stride = kHost ? RM : TM;
  const int b_panel_stride = kHost ? TK * RN : RN, b_k_stride = kHost ? RN : TN;
  const SliceLayout slices{TM, TN, TK, a_panel_stride, a_k_stride, b_panel_stride, b_k_stride};

  const int pad = kHost ? kCacheLine / static_cast<int>(sizeof(Scalar)) : 0;  // see to_cache_line
  const std::size_t bytes = Scratch::shmem_size(TM * TK + pad) + Scratch::shmem_size(b_panels * RN * TK + pad);
  Policy policy(space, league, team_size, vector_length);
  const int level = bytes <= static_cast<std::size_t>(policy.scratch_size_max(0)) ? 0 : 1;
  policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
  const bool read_c0 = beta != Scalar(0);

  Kokkos::parallel_for(
      "matrix::gemm-tiled", policy, KOKKOS_LAMBDA(const Member& team) {
        const int first_tile = team.league_rank() / tiles_n * run;
        const int end_tile = first_tile + run < tiles_m ? first_tile + run : tiles_m;
        const int tile_j = team.league_rank() % tiles_n * TN;
        Scratch a_slice(team.team_scratch(level), TM * TK + pad);
        Scratch b_slice(team.team_scratch(level), b_panels * RN * TK + pad);
        Scalar* const ap = pad > 0 ? to_cache_line(a_slice.data()) : a_slice.data();
        Scalar* const bp = pad > 0 ? to_cache_line(b_slice.data()) : b_slice.data();
        for (int k0 = 0; k0 < K; k0 += TK) {
          const int depth = K - k0 < TK ? K - k0 : TK;
          for (int t = first_tile; t < end_tile; ++t) {
            const int tile_i = t * TM;
            pack_slices<kHost, RM, RN>(team, alpha, A, B, tile_i, tile_j, k0, depth, t == first_tile, slices, ap, bp);
            team.team_barrier();
            const bool first = k0 == 0;
            // A panels vary fastest: on the host one B panel is reused from L1 across the tile's
            // A panels; on a GPU neighbouring threads read neighbouring A panels.
            Kokkos::parallel_for(Kokkos::TeamVectorRange(team, blocks), [&](const int block) {
              const int p = block % a_panels, q = block / a_panels;
              const Scalar* a = ap + p * a_panel_stride;
              const Scalar* b = bp + q * b_panel_stride;
              const int i0 = tile_i + p * RM, j0 = tile_j + q * RN;
              const int rows = M - i0 < RM ? M - i0 : RM;
              const int last = tile_j + TN < N ? tile_j + TN : N;  // the tile's or the matrix's edge
              const int cols = last - j0 < RN ? last - j0 : RN;
              prefetch_block<kHost, RM, RN>(C, i0, j0, rows);
              Scalar acc[RM][RN] = {};
              multiply_block<Space>(a, b, depth, a_k_stride, b_k_stride, acc);
              for (int r = 0; r < rows; ++r) {
                for (int c = 0; c < cols; ++c) {
                  // The first slice starts C from beta*C0 (not read at all when beta is 0, as in BLAS).
                  const Scalar start = first ? (read_c0 ? beta * C0(i0 + r, j0 + c) : Scalar(0)) : C(i0 + r, j0 + c);
                  C(i0 + r, j0 + c) = start + acc[r][c];
                }
              }
            });
            team.team_barrier();
          }
        }
      });
}

}  // namespace miniapp::matrix
