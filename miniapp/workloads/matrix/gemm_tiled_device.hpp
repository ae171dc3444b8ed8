#pragma once
// gemm-tiled's pieces for devices: a GPU's register block, the portable micro-kernel (both forms
// use it; the host's own is gemm_tiled_host.hpp's), and the resident form GPUs run (DeviceForm).
// The kernel, its tiles and the forms every space runs: gemm_tiled.hpp.

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/workloads/matrix/gemm_tiled_host.hpp"
#include "miniapp/workloads/matrix/params.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace miniapp::matrix {

// A GPU's register block (fixed: the host ISA must not change what device code is compiled); the
// unit tests run the resident form with it on host spaces.
template <class Scalar>
struct DeviceRegisterBlock {
  static constexpr int rows = 4, cols = sizeof(Scalar) == 4 ? 8 : 4;
};

// A team's packed slices of A and B: unmanaged Views in its scratch.
template <class Scalar, class Space>
using SliceScratch =
    Kokkos::View<Scalar*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The product's extents: A is m x k, B k x n.
struct ProductExtents {
  int m, k, n;
  template <class AView, class BView>
  ProductExtents(const AView& A, const BView& B)
      : m(static_cast<int>(A.extent(0))), k(static_cast<int>(A.extent(1))), n(static_cast<int>(B.extent(1))) {}
};

// The resident form's slices sit in one scratch allocation aligned to 16 bytes, the widest
// shared-memory load of CUDA and HIP (gemm_tiled_resident's layout keeps every panel row a thread
// reads on that alignment). A packet is 16 bytes of a panel row, read with one load: two float64
// or four float32 (GPU compilers do not merge the scalar loads themselves).
inline constexpr int kResidentAlignment = 16;
template <class Scalar>
struct alignas(kResidentAlignment) ScratchPacket {
  static constexpr int size = kResidentAlignment / static_cast<int>(sizeof(Scalar));
  Scalar v[size];
};

// N values of a panel row into registers: packets where the row is aligned, else one by one.
template <bool Aligned, class Scalar, int N>
KOKKOS_INLINE_FUNCTION void load_panel_row(const Scalar* row, Scalar (&out)[N]) {
  if constexpr (Aligned) {
    using Packet = ScratchPacket<Scalar>;
    static_assert(N % Packet::size == 0, "a panel row is whole packets");
    const Packet* const packets = reinterpret_cast<const Packet*>(row);
    for (int w = 0; w < N / Packet::size; ++w) {
      const Packet packet = packets[w];
      for (int i = 0; i < Packet::size; ++i) out[w * Packet::size + i] = packet.v[i];
    }
  } else {
    for (int i = 0; i < N; ++i) out[i] = row[i];
  }
}

// The micro-kernel: acc += the RM-row panel a times the RN-column panel b over `depth` values of
// k, a_k_stride and b_k_stride apart, with k outermost and one row of b loaded per step. Aligned:
// the caller promises every step's rows of a and b start on kResidentAlignment (read as packets).
template <bool Aligned = false, class Scalar, int RM, int RN>
KOKKOS_INLINE_FUNCTION void multiply_panels(const Scalar* a, const Scalar* b, const int depth, const int a_k_stride,
                                            const int b_k_stride, Scalar (&acc)[RM][RN]) {
  for (int kk = 0; kk < depth; ++kk) {
    MINIAPP_OPAQUE_POINTER(a);
    Scalar a_col[RM], b_row[RN];
    load_panel_row<Aligned>(a, a_col);
    load_panel_row<Aligned>(b, b_row);
    for (int r = 0; r < RM; ++r)
      for (int c = 0; c < RN; ++c) acc[r][c] += a_col[r] * b_row[c];
    a += a_k_stride;
    b += b_k_stride;
  }
}

// How a device space runs gemm-tiled (host spaces have one form, below):
// - resident: one thread per register block of the tile, which it holds in registers over the
//   whole of K; C read (beta != 0) and written once (gemm_tiled_resident);
// - streaming: the portable form below, which adds each k slice's product into C: at n = 4096
//   and TK = 32, 128 reads and writes of C through memory, more bytes than the packed slices;
// - automatic: resident where the space can run a team of one thread per block, else streaming.
enum class DeviceForm { automatic, resident, streaming };

// The form a gemm-tiled product ran in: host spaces' one form, or a device space's.
enum class TiledForm { host, resident, streaming };
inline const char* form_name(const TiledForm form) {
  switch (form) {
    case TiledForm::resident: return "resident";
    case TiledForm::streaming: return "streaming";
    default: return "host";
  }
}

// The resident form's A slice: element (r, kk) at kk * (TM + kResidentPadding) + r. A warp packs
// 8 consecutive k of 4 rows (coalesced reads of A's rows); with the padding its stores spread
// over a GPU's 32 shared-memory banks (for TM = 32, float32: bank r + 4 kk, all 32 distinct;
// float64: banks 2 r + 8 kk and the next, the two wavefronts its 256 bytes take), where unpadded
// 8 threads shared each bank.
inline constexpr int kResidentPadding = 4;
inline constexpr int kResidentChunk = 8;  // consecutive k of a row packed by neighbouring threads
// Both slices share one allocation on kResidentAlignment, the B slice right after the A slice:
// RM and RN values, the padding, and so the padded A stride and TN, are whole packets (checked
// below), so every panel row a thread reads starts on a packet.

// The resident form packs its slices kPackBatch elements a thread at a time: the batch's global
// loads are issued back to back, then stored. A TeamThreadRange loop of one load and one store
// waits on each load in turn (its PTX: one ld.global per iteration, the st.shared right behind):
// with the default tiles 24 memory round trips a thread per float64 slice and 96 per float32
// slice, 6 in batches. The batch: 4 float64 and 16 float32 (ptxas, sm_80: 66 and 80 registers;
// 8 float64 took 84, 5 teams of 128 an SM instead of 7; the float32 teams are held to 8 an SM by
// their scratch, not their registers).
template <class Scalar>
inline constexpr int kPackBatch = sizeof(Scalar) == 4 ? 16 : 4;

// Packs `count` elements into dst: element(e, slot) returns element e's value and sets slot, its
// place in dst (negative: not stored, as the chunk padding past TK).
template <class Scalar, class Member, class Element>
KOKKOS_INLINE_FUNCTION void pack_in_batches(const Member& team, const int count, Scalar* const dst,
                                            const Element& element) {
  const int step = team.team_size();
  constexpr int batch = kPackBatch<Scalar>;
  for (int first = team.team_rank(); first < count; first += batch * step) {
    Scalar value[batch];
    int slot[batch];
    for (int u = 0; u < batch; ++u) {
      const int e = first + u * step;
      slot[u] = -1;
      value[u] = e < count ? element(e, slot[u]) : Scalar(0);
    }
    for (int u = 0; u < batch; ++u)
      if (slot[u] >= 0) dst[slot[u]] = value[u];
  }
}

// The resident form, on any space whose teams can have one thread per RM x RN block of the tile
// (GPUs: 64 or 128 threads for the default tiles; host teams are as wide as their thread pool,
// which the unit tests use with small tiles). Per k slice the team packs alpha * A and B into
// scratch, then each thread multiplies its block's panels into its accumulators; after the last
// slice each thread writes its block of C once. Returns false, having launched nothing, where
// the space cannot run the team (more blocks than its team size limit for this kernel, or the
// slices exceed its level-0 scratch).
template <class Scalar, int RM, int RN, class Space, class AView, class BView, class CView, class C0View,
          MINIAPP_KERNEL_UNIT>
bool gemm_tiled_resident(const Space& space, const TileShape& tiles, Scalar alpha, const AView& A, const BView& B,
                         Scalar beta, const C0View& C0, const CView& C) {
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  static_assert(RM * sizeof(Scalar) % kResidentAlignment == 0 && RN * sizeof(Scalar) % kResidentAlignment == 0 &&
                    kResidentPadding * sizeof(Scalar) % kResidentAlignment == 0,
                "each thread's panel rows start on a vector load's alignment");
  const ProductExtents extents(A, B);
  const int M = extents.m, K = extents.k, N = extents.n, TM = tiles.m, TN = tiles.n, TK = tiles.k;
  if (TM < 1 || TN < 1 || TM % RM != 0 || TN % RN != 0 || TK < 1)
    throw std::invalid_argument("gemm-tiled: tile " + to_string(tiles) + " is not a multiple of the " +
                                std::to_string(RM) + " x " + std::to_string(RN) + " register block");
  const int tiles_n = (N + TN - 1) / TN;
  const int league = (M + TM - 1) / TM * tiles_n;
  const int a_panels = TM / RM, blocks = a_panels * (TN / RN);
  const int a_k_stride = TM + kResidentPadding, b_k_stride = TN;
  const int a_elements = TM * ((TK + kResidentChunk - 1) / kResidentChunk * kResidentChunk);
  const std::size_t slices = sizeof(Scalar) * static_cast<std::size_t>(a_k_stride + b_k_stride) * TK;
  const std::size_t bytes = slices + kResidentAlignment;  // room to align the allocation's start
  const bool read_c0 = beta != Scalar(0);

  const auto kernel = KOKKOS_LAMBDA(const Member& team) {
    const int tile_i = team.league_rank() / tiles_n * TM;
    const int tile_j = team.league_rank() % tiles_n * TN;
    Scalar* const ap = static_cast<Scalar*>(team.team_scratch(0).get_shmem_aligned(slices, kResidentAlignment));
    Scalar* const bp = ap + a_k_stride * TK;
    // A panels vary fastest: neighbouring threads read neighbouring A panels and share B panels.
    const int p = team.team_rank() % a_panels, q = team.team_rank() / a_panels;
    Scalar acc[RM][RN] = {};
    for (int k0 = 0; k0 < K; k0 += TK) {
      pack_in_batches(team, a_elements, ap, [&](const int e, int& slot) {
        const int rest = e / kResidentChunk;
        const int r = rest % TM, kk = rest / TM * kResidentChunk + e % kResidentChunk;
        const int i = tile_i + r, k = k0 + kk;
        if (kk < TK) slot = kk * a_k_stride + r;
        return (kk < TK && i < M && k < K) ? alpha * A(i, k) : Scalar(0);
      });
      pack_in_batches(team, TK * TN, bp, [&](const int e, int& slot) {
        const int c = e % TN, kk = e / TN;
        const int j = tile_j + c, k = k0 + kk;
        slot = kk * b_k_stride + c;
        return (k < K && j < N) ? B(k, j) : Scalar(0);
      });
      team.team_barrier();
      const int depth = K - k0 < TK ? K - k0 : TK;
      multiply_panels<true>(ap + p * RM, bp + q * RN, depth, a_k_stride, b_k_stride, acc);
      team.team_barrier();
    }
    // Whole loops over the block with the edges as conditions, so that acc stays in registers.
    const int i0 = tile_i + p * RM, j0 = tile_j + q * RN;
    for (int r = 0; r < RM; ++r) {
      for (int c = 0; c < RN; ++c) {
        const int i = i0 + r, j = j0 + c;
        if (i < M && j < N) C(i, j) = (read_c0 ? beta * C0(i, j) : Scalar(0)) + acc[r][c];
      }
    }
  };
  Policy policy(space, league, 1);
  policy.set_scratch_size(0, Kokkos::PerTeam(bytes));
  if (bytes > static_cast<std::size_t>(policy.scratch_size_max(0)) ||
      blocks > policy.team_size_max(kernel, Kokkos::ParallelForTag()))
    return false;
  Kokkos::parallel_for("matrix::gemm-tiled-resident",
                       Policy(space, league, blocks).set_scratch_size(0, Kokkos::PerTeam(bytes)), kernel);
  return true;
}

}  // namespace miniapp::matrix
