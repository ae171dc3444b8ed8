#pragma once
// The distance workload's symmetric variant: each unordered pair of points once, both entries of
// the matrix written from a tile in team scratch.

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/workloads/distance/kernels.hpp"

#include <cstdint>

namespace miniapp::distance::kernels {

// Each unordered pair once: a team takes a pair of T x T tiles (I >= J) of the lower triangle,
// computes it into scratch and writes it and its transpose row by row, so both writes are
// contiguous. Every tile pair is the same work, so the triangle is balanced across teams. The
// tile's rows in scratch are T + 1 values apart: the transpose reads a column of the tile across
// a warp's lanes, which at a stride of T (32) values all fell in one bank of shared memory, a
// 32-way conflict on every read (float32). Tiles of 64 on devices, each thread 16 entries each way
// instead of 4, the faster of the two timed (docs/tuning-notes.md, "distance: symmetric on
// devices"). Host spaces keep 32 (not measured there).
template <class Space>
inline constexpr int kSymmetricTile = is_host_space<Space>() ? 32 : 64;

// A tile's entries into its scratch and into out, rows [i0, i0 + height) x columns [j0, j0 + width).
// Held false (the workload's): a thread a row (TeamThreadRange), its lanes over the columns, each
// entry loading its column point. Held true (prepared for a GPU; Dim read at run time takes the
// plain form): each lane loads its T / lanes column points once into registers and takes them
// down every team_size-th row of the tile (held_columns_down_rows), as direct_block does for
// direct, where it was the lever (docs/tuning-notes.md): per entry the loads fall from dim (plus the row's dim once a row) to dim x (1 / rows + lanes / T). The
// same squared_distance: the same bits.
template <int Dim, int T, bool Held, class Space, class Member, class Points, class Out, class Tile>
KOKKOS_INLINE_FUNCTION void symmetric_fill(const Member& team, const Points& points, const Out& out, const Tile& tile,
                                           const std::int64_t i0, const std::int64_t j0, const std::int64_t height,
                                           const std::int64_t width, const int dim, const bool squared) {
  using Scalar = typename Out::non_const_value_type;
  if constexpr (Held && Dim > 0) {
    constexpr int lanes = Shape<Space>::vector_length;
    held_columns_down_rows<Dim, (T + lanes - 1) / lanes, Space>(
        team, points, i0, height, width, [&](const std::int64_t c, const int d) { return points(j0 + c, d); },
        [&](const std::int64_t r, const std::int64_t c, const Scalar v) {
          tile(r, c) = v;
          out(i0 + r, j0 + c) = v;
        },
        squared);
  } else {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, height), [&](const std::int64_t r) {
      const RowPoint<Dim, Points> own(points, i0 + r);
      for_columns<Space>(team, 0, width, [&](const std::int64_t c) {
        const Scalar s = squared_distance<Dim>(own, points, j0 + c, dim);
        const Scalar v = squared ? s : compat::math::sqrt(s);
        tile(r, c) = v;
        out(i0 + r, j0 + c) = v;
      });
    });
  }
}

template <int Dim, int T, bool Held, class Space, class Points, class Out, MINIAPP_KERNEL_UNIT>
void symmetric_tiles(const Space& space, const Points& points, const Out& out, int runtime_dim, bool squared) {
  const int dim = Dim > 0 ? Dim : runtime_dim;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scalar = typename Out::non_const_value_type;
  using Tile = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const auto n = static_cast<std::int64_t>(points.extent(0));
  const std::int64_t tiles = (n + T - 1) / T;
  const std::int64_t pairs = tiles * (tiles + 1) / 2;
  Kokkos::TeamPolicy<Space> policy(space, static_cast<int>(pairs), Shape<Space>::team_size,
                                   Shape<Space>::vector_length);
  const int level = scratch_level(policy, Tile::shmem_size(T, T + 1));
  policy.set_scratch_size(level, Kokkos::PerTeam(Tile::shmem_size(T, T + 1)));
  Kokkos::parallel_for(
      "distance::symmetric", policy, KOKKOS_LAMBDA(const Member& team) {
        // Pair index k = I (I + 1) / 2 + J with J <= I.
        const std::int64_t k = team.league_rank();
        std::int64_t I = static_cast<std::int64_t>((compat::math::sqrt(8.0 * double(k) + 1.0) - 1.0) / 2.0);
        while (I * (I + 1) / 2 > k) --I;
        while ((I + 1) * (I + 2) / 2 <= k) ++I;
        const std::int64_t J = k - I * (I + 1) / 2;
        const std::int64_t i0 = I * T, j0 = J * T;
        const std::int64_t height = i0 + T <= n ? T : n - i0;
        const std::int64_t width = j0 + T <= n ? T : n - j0;
        Tile tile(team.team_scratch(level), T, T + 1);
        symmetric_fill<Dim, T, Held, Space>(team, points, out, tile, i0, j0, height, width, dim, squared);
        if (I == J) return;
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, width), [&](const std::int64_t c) {
          for_columns<Space>(team, 0, height, [&](const std::int64_t r) { out(j0 + c, i0 + r) = tile(r, c); });
        });
      });
}

// The workload's symmetric: tiles of kSymmetricTile<Space> (T 0), or of T (benchmarks
// distance-symmetric-t32, -t64, and -t96 and -t128 prepared, the unit tests); Held:
// symmetric_fill's held form (benchmark distance-symmetric-held-t64).
template <int T = 0, bool Held = false, class Space, class Points, class Out>
void symmetric(const Space& space, const Points& points, const Out& out, int dim, bool squared) {
  constexpr int tile = T > 0 ? T : kSymmetricTile<Space>;
  with_dimension(dim, [&](auto fixed) {
    symmetric_tiles<decltype(fixed)::value, tile, Held>(space, points, out, dim, squared);
  });
}

}  // namespace miniapp::distance::kernels
