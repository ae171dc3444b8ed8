#pragma once
// C = alpha*A*B + beta*C0, the hand-tuned form: one team per TM x TN tile of C. For each TK-deep
// slice of K the team packs alpha*A and B into scratch as register-block panels (zero-padded
// past the matrix edges, so the micro-kernel has no bounds checks), then each thread multiplies
// RM x RN blocks of C held in registers, with k outermost and contiguous loads of RN values of B
// that the compiler vectorizes.
//
// The same kernel runs on every space; only the tile sizes, the team size and the order of the
// packed panels differ (per-space defaults in default_tiles()):
// - host: one thread per team; each panel is contiguous over its whole k range, so an A panel
//   stays in L1 while the thread sweeps the B panels of the tile from L2, along the same rows of
//   C (the same pages; sweeping down the A panels instead ran 1.3x slower at n = 4096), packed
//   from raw row pointers, and each block goes from registers to C in vectors
//   (gemm_tiled_host.hpp);
// - GPU: one thread per register block; panels interleaved k-major, so the threads of a warp
//   read consecutive scratch words (no bank conflicts) while they share a k. Each thread keeps
//   its block in registers over the whole of K and writes C once (gemm_tiled_resident), where
//   the space can run a team of one thread per block; else the portable form, which adds each
//   k slice's product into C (DeviceForm).

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/workloads/matrix/gemm_tiled_device.hpp"
#include "miniapp/workloads/matrix/gemm_tiled_host.hpp"
#include "miniapp/workloads/matrix/params.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace miniapp::matrix {

// Rows x columns of C one thread keeps in registers. Host: rows of two or three SIMD registers.
// On AVX2's 16 registers, where the block is written in explicit vectors (MINIAPP_HOST_SIMD), 6 rows
// of two (12 accumulators, 2 loads and a broadcast: 15 registers; BLIS's shape) in both precisions:
// float64 ran 1.02-1.12x faster than with 4 rows, float32 level with 4 rows of two or three
// (docs/tuning-notes.md). On AVX-512's 32, 8 rows of three (24 accumulators: 8 broadcasts and 3
// loads feed 24 FMAs; GCC's own code for an 8-row float64 block ran several times slower).
// Without explicit vectors (SSE2, and the host spaces of CUDA/HIP builds), 4 rows of two; a wider
// block spills there. GPU: DeviceRegisterBlock.
template <class Scalar, class Space>
struct RegisterBlock {
  static constexpr bool wide = is_host_space<Space>() && simd::kHostVectorRegisters >= 32 &&
                               (sizeof(Scalar) == 4 || MINIAPP_HOST_SIMD);
  static constexpr bool avx2 = is_host_space<Space>() && MINIAPP_HOST_SIMD && simd::kHostVectorBytes == 32;
  static constexpr int rows = wide ? 8 : avx2 ? 6 : is_host_space<Space>() ? 4 : DeviceRegisterBlock<Scalar>::rows;
  static constexpr int vectors = MINIAPP_HOST_SIMD && wide ? 3 : 2;
  static constexpr int cols = is_host_space<Space>() ? vectors * simd::kHostVectorBytes / static_cast<int>(sizeof(Scalar))
                                                     : DeviceRegisterBlock<Scalar>::cols;
  // On a GPU a tile holds whole blocks. The host clips a tile's last row and column panels to it
  // (6 rows divide no tile).
  static_assert(is_host_space<Space>() || (kTileMultiple % rows == 0 && kTileMultiple % cols == 0),
                "tile multiple must hold a GPU block");
};

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

// Row tiles per team on the host: a team takes a run of row tiles of one tile column and, per k
// slice, packs B's slice once for all of them (one tile per team packed B once per row tile:
// at n = 4096, 16 times; docs/tuning-notes.md has what that cost). The longest run that keeps the
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

// C's rows x cols block at (i0, j0) = start + the product of the A and B panels, start being
// beta * C0 on the first k slice (C0 not read at all where beta is 0, as in BLAS) and C on the
// later ones: on the host in explicit vectors where this build has them.
template <class Space, int RM, int RN, class Scalar, class CView, class C0View>
KOKKOS_INLINE_FUNCTION void add_block(const Scalar* a, const Scalar* b, const int depth, const int a_k_stride,
                                      const int b_k_stride, const CView& C, const C0View& C0, const Scalar beta,
                                      const int i0, const int j0, const int rows, const int cols, const bool first,
                                      const bool read_c0) {
#if MINIAPP_HOST_SIMD
  if constexpr (is_host_space<Space>()) {
    static_assert(std::is_same<typename CView::array_layout, Kokkos::LayoutRight>::value &&
                      std::is_same<typename C0View::array_layout, Kokkos::LayoutRight>::value,
                  "rows are contiguous");
    const BlockStart start = !first ? BlockStart::c : read_c0 ? BlockStart::scaled_c0 : BlockStart::zero;
    const HostBlock<Scalar> out{&C(i0, j0), C.stride(0), read_c0 ? &C0(i0, j0) : nullptr, C0.stride(0), beta,
                                start, rows, cols};
    multiply_into_c_host<Scalar, RM, RN>(a, b, depth, a_k_stride, b_k_stride, out);
    return;
  }
#endif
  Scalar acc[RM][RN] = {};
  multiply_panels(a, b, depth, a_k_stride, b_k_stride, acc);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const Scalar start = first ? (read_c0 ? beta * C0(i0 + r, j0 + c) : Scalar(0)) : C(i0 + r, j0 + c);
      C(i0 + r, j0 + c) = start + acc[r][c];
    }
  }
}

// p rounded up to the next cache line (64 bytes). On host spaces each packed slice is padded by a
// line and starts on one: Kokkos 3.4 hands out OpenMP level-1 scratch 48 bytes past a line, and
// every 64-byte load of a packed panel then straddled two lines.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar* to_cache_line(Scalar* const p) {
  constexpr std::uintptr_t line = 64;
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(p);
  return reinterpret_cast<Scalar*>((address + line - 1) / line * line);
}

// The L2 per core from which the host takes the wide tiles (below): they ran faster on L2s of
// 512 KiB (AMD EPYC, Zen 3, whose 32 MiB L3 backs the 640 KiB of slices), 1.25 and 2 MiB (Intel
// Xeons); smaller or unknown L2s, not measured, keep the narrow ones.
inline constexpr long kWideTileL2Bytes = 512L << 10;

// The space's tiles for an m x n product, on `concurrency` threads.
// Host: 128 x 512 tiles with 1 KiB of each packed row, k 128 in float64 and 256 in float32: 640
// KiB of slices, one A panel (RM x TK, 6 or 8 KiB) in L1, half as many packings of A per flop as
// 128 x 256 x 128 (384 KiB), faster than the narrow tiles at n = 1024 and 4096 in both
// precisions. Only while the product gives every thread two tiles, and where the L2
// holds kWideTileL2Bytes; else 128 x 256 x 128.
// GPU: 24 KiB of scratch a team. float64 32 x 64 x 32 (the H100 search on the streaming form;
// on the resident form at n = 2048 on the H200 near the best, 32 x 128 x 16). float32:
// 64 x 128 x 32 (256 threads a team, a 4 x 8 block of C each) where the product has a tile for
// every 1024 of the space's resident threads (an H200's 132 SMs: 264 tiles, n = 2048 has 512),
// the faster at n = 2048 on the H200; smaller products keep 32 x 64 x 64, four times as many
// teams. The searches and their times: docs/tuning-notes.md.
template <class Scalar, class Space>
TileShape default_tiles(const std::size_t m, const std::size_t n, const int concurrency) {
  if constexpr (!is_host_space<Space>()) {
    if constexpr (sizeof(Scalar) == 4) {
      const TileShape big{64, 128, 32};
      const std::size_t big_tiles = ((m + big.m - 1) / big.m) * ((n + big.n - 1) / big.n);
      if (big_tiles >= static_cast<std::size_t>(std::max(concurrency, 0)) / 1024) return big;
    }
    return {32, 64, static_cast<int>(256 / sizeof(Scalar))};
  }
  const TileShape wide{128, 512, static_cast<int>(1024 / sizeof(Scalar))};
  const std::size_t wide_tiles = ((m + wide.m - 1) / wide.m) * ((n + wide.n - 1) / wide.n);
  if (host_l2_bytes() >= kWideTileL2Bytes && wide_tiles >= 2 * static_cast<std::size_t>(concurrency)) return wide;
  return {128, 256, 128};
}

// The host's form, and the devices' streaming form (DeviceForm).
template <class Scalar, class Space, class AView, class BView, class CView, class C0View, MINIAPP_KERNEL_UNIT>
void gemm_tiled_streaming(const Space& space, const TileShape& tiles, Scalar alpha, const AView& A, const BView& B,
                          Scalar beta, const C0View& C0, const CView& C) {
  constexpr int RM = RegisterBlock<Scalar, Space>::rows;
  constexpr int RN = RegisterBlock<Scalar, Space>::cols;
  constexpr bool kHost = is_host_space<Space>();
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using Scratch = SliceScratch<Scalar, Space>;
  const ProductExtents extents(A, B);
  const int M = extents.m, K = extents.k, N = extents.n, TM = tiles.m, TN = tiles.n, TK = tiles.k;
  if ((!kHost && (TM % RM != 0 || TN % RN != 0)) || TK < 1)
    throw std::invalid_argument("gemm-tiled: tile " + to_string(tiles) + " is not a multiple of the register block");
  const int tiles_m = (M + TM - 1) / TM, tiles_n = (N + TN - 1) / TN;
  const int run = kHost ? host_row_run(tiles_m, tiles_n, std::max(1, static_cast<int>(space.concurrency()))) : 1;
  const int league = (tiles_m + run - 1) / run * tiles_n;
  const int a_panels = (TM + RM - 1) / RM, b_panels = (TN + RN - 1) / RN;
  const int blocks = a_panels * b_panels;

  // GPU: 8 lanes per thread, one lane per register block up to 256 lanes.
  const int vector_length = kHost ? 1 : 8;
  const int team_size = kHost ? 1 : std::max(1, std::min(blocks, 256) / vector_length);
  // Element (panel, kk, within) of a packed slice lives at panel * panel_stride + kk * k_stride + within.
  const int a_panel_stride = kHost ? TK * RM : RM, a_k_stride = kHost ? RM : TM;
  const int b_panel_stride = kHost ? TK * RN : RN, b_k_stride = kHost ? RN : TN;
  const SliceLayout slices{TM, TN, TK, a_panel_stride, a_k_stride, b_panel_stride, b_k_stride};

  const int pad = kHost ? kCacheLine / static_cast<int>(sizeof(Scalar)) : 0;  // see to_cache_line
  const std::size_t bytes =
      Scratch::shmem_size(a_panels * RM * TK + pad) + Scratch::shmem_size(b_panels * RN * TK + pad);
  Policy policy(space, league, team_size, vector_length);
  const int level = bytes <= static_cast<std::size_t>(policy.scratch_size_max(0)) ? 0 : 1;
  policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
  const bool read_c0 = beta != Scalar(0);

  Kokkos::parallel_for(
      "matrix::gemm-tiled", policy, KOKKOS_LAMBDA(const Member& team) {
        const int first_tile = team.league_rank() / tiles_n * run;
        const int end_tile = first_tile + run < tiles_m ? first_tile + run : tiles_m;
        const int tile_j = team.league_rank() % tiles_n * TN;
        Scratch a_slice(team.team_scratch(level), a_panels * RM * TK + pad);
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
            // Host: B panels vary fastest, so one A panel is reused from L1 across the tile's B
            // panels while they stream from L2, and consecutive blocks update the same rows of C
            // (the same pages). GPU: A panels vary fastest, so neighbouring threads read
            // neighbouring A panels.
            Kokkos::parallel_for(Kokkos::TeamVectorRange(team, blocks), [&](const int block) {
              const int p = kHost ? block / b_panels : block % a_panels;
              const int q = kHost ? block % b_panels : block / a_panels;
              const Scalar* a = ap + p * a_panel_stride;
              const Scalar* b = bp + q * b_panel_stride;
              const int i0 = tile_i + p * RM, j0 = tile_j + q * RN;
              const int bottom = tile_i + TM < M ? tile_i + TM : M;  // the tile's or the matrix's edge
              const int rows = bottom - i0 < RM ? bottom - i0 : RM;
              const int last = tile_j + TN < N ? tile_j + TN : N;
              const int cols = last - j0 < RN ? last - j0 : RN;
              add_block<Space, RM, RN>(a, b, depth, a_k_stride, b_k_stride, C, C0, beta, i0, j0, rows, cols,
                                       first, read_c0);
            });
            team.team_barrier();
          }
        }
      });
}

// C = alpha*A*B + beta*C0 on the space, in the form `form` names on device spaces (DeviceForm).
// Returns the form that ran.
template <class Scalar, class Space, class AView, class BView, class CView, class C0View, MINIAPP_KERNEL_UNIT>
TiledForm gemm_tiled(const Space& space, const TileShape& tiles, Scalar alpha, const AView& A, const BView& B,
                     Scalar beta, const C0View& C0, const CView& C, const DeviceForm form = DeviceForm::automatic) {
  if constexpr (!is_host_space<Space>()) {
    constexpr int RM = RegisterBlock<Scalar, Space>::rows, RN = RegisterBlock<Scalar, Space>::cols;
    if (form != DeviceForm::streaming &&
        gemm_tiled_resident<Scalar, RM, RN, Space, AView, BView, CView, C0View, KernelUnit>(space, tiles, alpha, A, B,
                                                                                            beta, C0, C))
      return TiledForm::resident;
    if (form == DeviceForm::resident)
      throw std::invalid_argument("gemm-tiled: the resident form cannot run a team of one thread per block of a " +
                                  to_string(tiles) + " tile on this space");
  }
  (void)form;
  gemm_tiled_streaming<Scalar, Space, AView, BView, CView, C0View, KernelUnit>(space, tiles, alpha, A, B, beta, C0, C);
  return is_host_space<Space>() ? TiledForm::host : TiledForm::streaming;
}

}  // namespace miniapp::matrix
