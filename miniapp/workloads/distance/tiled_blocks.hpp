#pragma once
// tiled's device form, the league over row blocks and column tiles, and the workload's tiled: this
// form on devices, kernels.hpp's tiled_rows on host spaces.

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/workloads/distance/kernels.hpp"

#include <cstdint>

namespace miniapp::distance::kernels {

// The columns of a tile whose points the held form keeps in its lanes' registers (at most: the
// tile is narrower where its scratch would not hold them, and then takes the plain form).
inline constexpr int kHeldTileColumns = 256;

// A team's block of rows [first, first + count) against its tile's columns [j0, j0 + width), the
// tile's points in scratch. Held false (the workload's): a thread a row, its lanes over the
// columns, each entry reading its column point from scratch. Held true (prepared for a GPU; Dim
// read at run time, or a tile narrower than kHeldTileColumns, takes the plain form): each lane
// copies its kHeldTileColumns / lanes column points from scratch into registers once and takes
// them down every team_size-th row of the block (held_columns_down_rows), as direct_block does
// for direct, where it was the lever (docs/tuning-notes.md). The same squared_distance: direct's
// bits.
template <int Dim, bool Held, class Space, class Member, class Points, class Out, class Tile>
KOKKOS_INLINE_FUNCTION void tiled_block_fill(const Member& team, const Points& points, const Out& out, const Tile& tile,
                                             const std::int64_t row0, const std::int64_t first, const std::int64_t count,
                                             const std::int64_t j0, const std::int64_t width, const int columns,
                                             const int dim, const bool squared) {
  using Scalar = typename Out::non_const_value_type;
  constexpr int lanes = Shape<Space>::vector_length;
  if constexpr (Held && Dim > 0) {
    if (columns == kHeldTileColumns) {
      held_columns_down_rows<Dim, kHeldTileColumns / lanes, Space>(
          team, points, row0 + first, count, width, [&](const std::int64_t jj, const int d) { return tile(jj, d); },
          [&](const std::int64_t r, const std::int64_t jj, const Scalar v) { out(first + r, j0 + jj) = v; }, squared);
      return;
    }
  }
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](const std::int64_t r) {
    const RowPoint<Dim, Points> own(points, row0 + first + r);
    for_columns<Space>(team, 0, width, [&](const std::int64_t jj) {
      const Scalar s = squared_distance<Dim>(own, tile, jj, dim);
      out(first + r, j0 + jj) = squared ? s : compat::math::sqrt(s);
    });
  });
}

// tiled's device form: a team per block of Rows (kTileRows) rows x tile_columns columns, the league
// over both, so each team loads its column points into scratch once (no barrier after) and the
// device gets rows / 16 x n / 256 teams. kernels.hpp's tiled_rows gives rows / 16 teams that each
// walk every tile with two barriers a tile: at n = 4096, 256 teams of 256 threads, a quarter of an
// H200's resident threads (the two forms' times: docs/tuning-notes.md, "distance: tiled on
// devices"). The same arithmetic, so direct's bits.
// Held: tiled_block_fill's held form, its tiles at most kHeldTileColumns wide.
template <int Dim, bool Held = false, int Rows = kTileRows, class Space, class Points, class Out, MINIAPP_KERNEL_UNIT>
void tiled_block_teams(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                       int runtime_dim, bool squared) {
  static_assert(Rows >= 1, "rows a team");
  const int dim = Dim > 0 ? Dim : runtime_dim;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scalar = typename Out::non_const_value_type;
  using Tile = ColumnTile<Scalar, Space>;
  const auto n = static_cast<std::int64_t>(points.extent(0));
  const int fit = tile_columns<Scalar, Space>(dim);
  const int columns = Held && fit > kHeldTileColumns ? kHeldTileColumns : fit;
  const std::int64_t column_tiles = (n + columns - 1) / columns;
  const std::int64_t blocks = (rows + Rows - 1) / Rows;
  Kokkos::TeamPolicy<Space> policy(space, static_cast<int>(blocks * column_tiles), Shape<Space>::team_size,
                                   Shape<Space>::vector_length);
  const int level = scratch_level(policy, Tile::shmem_size(columns, dim));
  policy.set_scratch_size(level, Kokkos::PerTeam(Tile::shmem_size(columns, dim)));
  Kokkos::parallel_for(
      "distance::tiled-blocks", policy, KOKKOS_LAMBDA(const Member& team) {
        // neighbouring teams share the column tile (its points stay in L2) and write neighbouring rows
        const std::int64_t j0 = team.league_rank() / blocks * columns;
        const std::int64_t first = team.league_rank() % blocks * Rows;
        const std::int64_t count = first + Rows <= rows ? Rows : rows - first;
        const std::int64_t width = j0 + columns <= n ? columns : n - j0;
        Tile tile(team.team_scratch(level), columns, dim);
        for (int k = 0; k < (Dim > 0 ? Dim : dim); ++k)
          Kokkos::parallel_for(Kokkos::TeamVectorRange(team, width),
                               [&](const std::int64_t jj) { tile(jj, k) = points(j0 + jj, k); });
        team.team_barrier();
        tiled_block_fill<Dim, Held, Space>(team, points, out, tile, row0, first, count, j0, width, columns, dim,
                                           squared);
      });
}

// tiled_block_teams for any dimension (benchmarks distance-tiled-blocks, -held, -held-r32; the unit
// tests).
template <bool Held = false, int Rows = kTileRows, class Space, class Points, class Out>
void tiled_blocks(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                  int dim, bool squared) {
  with_dimension(dim, [&](auto fixed) {
    tiled_block_teams<decltype(fixed)::value, Held, Rows>(space, points, out, row0, rows, dim, squared);
  });
}

// The workload's tiled: a team per block of rows x columns on devices (above), a team per block
// of rows over every tile on host spaces (tiled_rows).
template <class Space, class Points, class Out>
void tiled(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows, int dim,
           bool squared) {
  if constexpr (is_host_space<Space>()) {
    with_dimension(dim, [&](auto fixed) { tiled_rows<decltype(fixed)::value>(space, points, out, row0, rows, dim, squared); });
  } else {
    tiled_blocks(space, points, out, row0, rows, dim, squared);
  }
}

}  // namespace miniapp::distance::kernels
