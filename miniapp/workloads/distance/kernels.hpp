#pragma once
// The distance kernels, written once for every execution space. Each fills rows [row0, row0 + rows)
// of the matrix into out(i - row0, j), so the same kernel computes the whole matrix or one block
// of a chunked run. Free functions, not members: CUDA extended lambdas may not live in private
// member functions, and capturing `this` would copy a host object to the device.

#include "miniapp/core/fused.hpp"
#include "miniapp/core/host_simd.hpp"
#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/random.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/kokkos_kernels_compat.hpp"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace miniapp::distance::kernels {

// Coordinate k of point i is value i * D + k of the stream, on the host or in the space.
template <class Points>
void generate_on_host(const Points& points, std::uint64_t seed) {
  const std::size_t n = points.extent(0), dim = points.extent(1);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < dim; ++k)
      points(i, k) = static_cast<typename Points::value_type>(uniform01(seed, i * dim + k));
}

template <class Space, class Points, MINIAPP_KERNEL_UNIT>
void generate(const Space& space, const Points& points, std::uint64_t seed) {
  const auto n = static_cast<std::int64_t>(points.extent(0)), dim = static_cast<std::int64_t>(points.extent(1));
  Kokkos::parallel_for(
      "distance::generate", Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {0, 0}, {n, dim}),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t k) {
        points(i, k) = static_cast<typename Points::value_type>(uniform01(seed, static_cast<std::uint64_t>(i * dim + k)));
      });
}

// A row per thread and an entry per vector lane, j fastest: on a CPU the inner loop is a
// contiguous, vectorizable store stream; on a GPU a warp writes a row segment (coalesced).
template <class Space>
struct Shape {
  static constexpr int rows_per_team = is_host_space<Space>() ? 1 : 8;
  static constexpr int team_size = is_host_space<Space>() ? 1 : 8;
  static constexpr int vector_length = is_host_space<Space>() ? 1 : 32;
};

// The columns [begin, end) of a row, spread over the vector lanes. Each lane strides by the
// compile-time lane count instead of letting ThreadVectorRange stride by its run-time increment:
// on a host space (one lane) the loop is then a plain unit-stride loop the compiler vectorizes;
// on a GPU, neighbouring lanes still touch neighbouring columns (coalesced).
template <class Space, class Member, class F>
KOKKOS_INLINE_FUNCTION void for_columns(const Member& team, std::int64_t begin, std::int64_t end, const F& f) {
  constexpr int lanes = Shape<Space>::vector_length;
  Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int lane) {
    for (std::int64_t j = begin + lane; j < end; j += lanes) f(j);
  });
}

// `result` is a value or a reducer; Acc is the value type both reduce into.
template <class Space, class Acc, class Member, class Result, class F>
KOKKOS_INLINE_FUNCTION void reduce_columns(const Member& team, std::int64_t end, Result&& result, const F& f) {
  constexpr int lanes = Shape<Space>::vector_length;
  Kokkos::parallel_reduce(
      Kokkos::ThreadVectorRange(team, lanes),
      [&](const int lane, Acc& acc) {
        for (std::int64_t j = lane; j < end; j += lanes) f(j, acc);
      },
      result);
}

template <class Space>
Kokkos::TeamPolicy<Space> row_policy(const Space& space, std::int64_t rows, int rows_per_team) {
  const std::int64_t league = (rows + rows_per_team - 1) / rows_per_team;
  return Kokkos::TeamPolicy<Space>(space, static_cast<int>(league), Shape<Space>::team_size,
                                   Shape<Space>::vector_length);
}

// The rows [first, first + count) of the row_policy's team: per_team of them, fewer in the last.
struct TeamRows {
  std::int64_t first, count;
};
template <class Member>
KOKKOS_INLINE_FUNCTION TeamRows team_rows(const Member& team, std::int64_t rows, int per_team) {
  const std::int64_t first = std::int64_t(team.league_rank()) * per_team;
  return {first, first + per_team <= rows ? per_team : rows - first};
}

// The kernels read point j's coordinates for consecutive j: stored coordinate-major they are
// contiguous, so a CPU loads them as vectors and a GPU warp reads them coalesced. The points as
// given stay the input (the harness's copies and the verification use them).
template <class Space, class Points, class Coordinates, MINIAPP_KERNEL_UNIT>
void coordinate_major(const Space& space, const Points& points, const Coordinates& coordinates, int dim) {
  Kokkos::parallel_for(
      "distance::coordinate-major", Kokkos::RangePolicy<Space>(space, 0, points.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) {
        for (int k = 0; k < dim; ++k) coordinates(i, k) = points(i, k);
      });
}

// Point i's coordinates, held in registers when D is known at compile time: the column loop then
// loads only column points, and stores to the output cannot be mistaken for writes to them.
template <int Dim, class Points>
struct RowPoint {
  typename Points::non_const_value_type c[Dim];
  KOKKOS_INLINE_FUNCTION RowPoint(const Points& points, std::int64_t i) {
    for (int k = 0; k < Dim; ++k) c[k] = points(i, k);
  }
  KOKKOS_INLINE_FUNCTION typename Points::non_const_value_type operator[](int k) const { return c[k]; }
};

template <class Points>
struct RowPoint<0, Points> {
  const Points& points;
  std::int64_t i;
  KOKKOS_INLINE_FUNCTION RowPoint(const Points& p, std::int64_t row) : points(p), i(row) {}
  KOKKOS_INLINE_FUNCTION typename Points::non_const_value_type operator[](int k) const { return points(i, k); }
};

// The one expression every matrix kernel evaluates, so that they agree bit for bit. Each square
// is added by a fused multiply-add wherever the target has one: left to contraction, the same
// sum was fused in one form and not in another on a host (GCC multiplied a point's coordinates
// as one vector where they sat side by side, then added the lanes), a last-bit difference.
// Dim > 0: unrolled.
template <int Dim, class Own, class Columns>
KOKKOS_INLINE_FUNCTION auto squared_distance(const Own& own, const Columns& columns, std::int64_t j, int dim) {
  typename Columns::non_const_value_type s = 0;
  for (int k = 0; k < (Dim > 0 ? Dim : dim); ++k) {
    const auto d = own[k] - columns(j, k);
#if MINIAPP_FUSED_IN_HARDWARE
    s = fused(d, d, s);
#else
    s += d * d;
#endif
  }
  return s;
}

// K column points of Dim coordinates held in a thread's registers, read as squared_distance reads
// the points (column k, coordinate d): direct_block and symmetric's held form.
template <int Dim, class Scalar, int K>
struct HeldColumns {
  using non_const_value_type = Scalar;
  Scalar c[K][Dim];
  KOKKOS_INLINE_FUNCTION Scalar operator()(const std::int64_t k, const int d) const { return c[k][d]; }
};

// The held forms' part of a team (symmetric's and tiled's): each lane of each of the team's
// threads loads its K columns c = lane, lane + lanes, ... (c < width) through column(c, d) into
// registers once, then takes them down every team_size-th of `rows` rows, row r being the point
// points(first_point + r): put(r, c, value), the distance or its square. The same
// squared_distance as every form: the same bits.
template <int Dim, int K, class Space, class Member, class Points, class Column, class Put>
KOKKOS_INLINE_FUNCTION void held_columns_down_rows(const Member& team, const Points& points,
                                                   const std::int64_t first_point, const std::int64_t rows,
                                                   const std::int64_t width, const Column& column, const Put& put,
                                                   const bool squared) {
  using Scalar = typename Points::non_const_value_type;
  constexpr int lanes = Shape<Space>::vector_length;
  const int threads = team.team_size(), t = team.team_rank();
  Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int lane) {
    HeldColumns<Dim, Scalar, K> held;
    for (int k = 0; k < K; ++k) {
      const std::int64_t c = lane + std::int64_t(k) * lanes;
      for (int d = 0; d < Dim; ++d) held.c[k][d] = c < width ? column(c, d) : Scalar(0);
    }
    for (std::int64_t r = t; r < rows; r += threads) {
      const RowPoint<Dim, Points> own(points, first_point + r);
      for (int k = 0; k < K; ++k) {
        const std::int64_t c = lane + std::int64_t(k) * lanes;
        if (c >= width) break;
        const Scalar s = squared_distance<Dim>(own, held, k, Dim);
        put(r, c, squared ? s : compat::math::sqrt(s));
      }
    }
  });
}

// Calls f with std::integral_constant<int, D> for the dimensions compiled as constants (2, 3)
// and with D = 0, read at run time, for any other.
template <class F>
void with_dimension(int dim, F&& f) {
  switch (dim) {
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    default: f(std::integral_constant<int, 0>{});
  }
}

// Entries [j0, j0 + m) of the rows of points a and b into to_a[0, m) and to_b[0, m).
template <int Dim, class Own, class Points, class Scalar>
KOKKOS_INLINE_FUNCTION void direct_pair_entries(const Own& a, const Own& b, const Points& points, const std::int64_t j0,
                                                const std::int64_t m, const int dim, const bool squared,
                                                Scalar* const to_a, Scalar* const to_b) {
  if (squared) {
    for (std::int64_t j = 0; j < m; ++j) {
      to_a[j] = squared_distance<Dim>(a, points, j0 + j, dim);
      to_b[j] = squared_distance<Dim>(b, points, j0 + j, dim);
    }
  } else {
    for (std::int64_t j = 0; j < m; ++j) {
      to_a[j] = compat::math::sqrt(squared_distance<Dim>(a, points, j0 + j, dim));
      to_b[j] = compat::math::sqrt(squared_distance<Dim>(b, points, j0 + j, dim));
    }
  }
}

// Bytes of output above which direct's host loop writes around the caches (simd::stream_copy),
// by chunks of kStreamChunkBytes per row computed into L1; a smaller one is faster written into a
// cache. 32 MiB: an AMD EPYC CCD's L3; 256-byte chunks beat 1 KiB ones (docs/tuning-notes.md).
inline constexpr std::size_t kStreamOutputBytes = std::size_t(32) << 20, kStreamChunkBytes = 256;

// A team's rows [first, first + count) of direct. Host (one thread per team) with D fixed: rows in
// pairs, so each column point is loaded once for two rows: one row per pass read three
// coordinates for each value it wrote, and the reads, not the writes, bounded it; outputs over
// kStreamOutputBytes go out by a kStreamChunkBytes chunk per row. Elsewhere a row per thread, an entry per
// lane. The same squared_distance either way: the values are the same. (A function, not the
// kernel's lambda: nvcc refuses an extended lambda that first captures a variable in `if constexpr`.)
template <int Dim, class Space, bool Host, class Member, class Points, class Out>
KOKKOS_INLINE_FUNCTION void direct_team_rows(const Member& team, const Points& points, const Out& out,
                                             const std::int64_t row0, const std::int64_t first,
                                             const std::int64_t count, const int dim, const bool squared) {
  using Scalar = typename Out::non_const_value_type;
  const auto n = static_cast<std::int64_t>(points.extent(0));
  std::int64_t r = 0;
  if constexpr (Host && Dim > 0) {
    static_assert(std::is_same<typename Out::array_layout, Kokkos::LayoutRight>::value, "rows are contiguous");
#if MINIAPP_HOST_STREAM_STORES
    const bool stream = out.span() * sizeof(Scalar) > kStreamOutputBytes;
    constexpr std::int64_t kChunk = kStreamChunkBytes / sizeof(Scalar);
    Scalar chunk_a[kChunk], chunk_b[kChunk];
#endif
    for (; r + 2 <= count; r += 2) {
      const RowPoint<Dim, Points> a(points, row0 + first + r), b(points, row0 + first + r + 1);
      Scalar* const out_a = &out(first + r, 0);
      Scalar* const out_b = &out(first + r + 1, 0);
#if MINIAPP_HOST_STREAM_STORES
      for (std::int64_t j0 = 0; stream && j0 < n; j0 += kChunk) {
        const std::int64_t m = n - j0 < kChunk ? n - j0 : kChunk;
        direct_pair_entries<Dim>(a, b, points, j0, m, dim, squared, chunk_a, chunk_b);
        simd::stream_copy(out_a + j0, chunk_a, m);
        simd::stream_copy(out_b + j0, chunk_b, m);
      }
      if (stream) continue;
#endif
      direct_pair_entries<Dim>(a, b, points, 0, n, dim, squared, out_a, out_b);
    }
#if MINIAPP_HOST_STREAM_STORES
    if (stream) simd::stream_fence();
#endif
  }
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r, count), [&](const std::int64_t row) {
    const std::int64_t local = first + row;
    const RowPoint<Dim, Points> own(points, row0 + local);
    for_columns<Space>(team, 0, n, [&](const std::int64_t j) {
      const Scalar s = squared_distance<Dim>(own, points, j, dim);
      out(local, j) = squared ? s : compat::math::sqrt(s);
    });
  });
}

// Dim > 0 fixes the dimension at compile time: the loop over coordinates unrolls and the loop
// over columns vectorizes; Dim = 0 reads it at run time (any other D).
template <int Dim, class Space, class Points, class Out, MINIAPP_KERNEL_UNIT>
void direct_rows(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                 int runtime_dim, bool squared) {
  const int dim = Dim > 0 ? Dim : runtime_dim;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  constexpr bool kHost = is_host_space<Space>();
  constexpr int per_team = kHost ? 4 : Shape<Space>::rows_per_team;  // host: two pairs of rows
  Kokkos::parallel_for(
      "distance::direct", row_policy(space, rows, per_team), KOKKOS_LAMBDA(const Member& team) {
        const TeamRows part = team_rows(team, rows, per_team);
        direct_team_rows<Dim, Space, kHost>(team, points, out, row0, part.first, part.count, dim, squared);
      });
}

// Column points staged tile by tile in team scratch, so a team of rows reads each column point
// from global memory once.
inline constexpr int kTileRows = 16;

// GPU: a tile takes up to 16 KB of shared memory, 256 columns, which gives every lane of a team
// several. CPU: a row's pass over a tile is one vectorized loop whose set-up (alias checks,
// remainders) each tile repeats, and the caches hold far more than a GPU's shared memory, so up
// to 64 KB (L2-resident, 4096 three-dimensional float32 points; docs/tuning-notes.md).
template <class Scalar, class Space>
int tile_columns(int dim) {
  const int widest = is_host_space<Space>() ? 4096 : 256;
  const std::size_t budget = is_host_space<Space>() ? 65536 : 16384;
  const int fit = static_cast<int>(budget / (static_cast<std::size_t>(dim) * sizeof(Scalar)));
  return fit < 1 ? 1 : (fit > widest ? widest : fit);
}

// Level 0 (fast, small) scratch where the tile fits, else level 1: Kokkos 5's OpenMP gives a team
// at most 32 KiB of level 0.
template <class Policy>
int scratch_level(const Policy& policy, std::size_t bytes) {
  return bytes <= static_cast<std::size_t>(policy.scratch_size_max(0)) ? 0 : 1;
}

// A tile of column points in team scratch, coordinate-major like the points, so a row's pass over
// the tile reads it contiguously.
template <class Scalar, class Space>
using ColumnTile = Kokkos::View<Scalar**, Kokkos::LayoutLeft, typename Space::scratch_memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <int Dim, class Space, class Points, class Out, MINIAPP_KERNEL_UNIT>
void tiled_rows(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                int runtime_dim, bool squared) {
  const int dim = Dim > 0 ? Dim : runtime_dim;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scalar = typename Out::non_const_value_type;
  using Tile = ColumnTile<Scalar, Space>;
  const auto n = static_cast<std::int64_t>(points.extent(0));
  const int columns = tile_columns<Scalar, Space>(dim);
  auto policy = row_policy(space, rows, kTileRows);
  const int level = scratch_level(policy, Tile::shmem_size(columns, dim));
  policy.set_scratch_size(level, Kokkos::PerTeam(Tile::shmem_size(columns, dim)));
  Kokkos::parallel_for(
      "distance::tiled", policy, KOKKOS_LAMBDA(const Member& team) {
        Tile tile(team.team_scratch(level), columns, dim);
        const TeamRows part = team_rows(team, rows, kTileRows);
        for (std::int64_t j0 = 0; j0 < n; j0 += columns) {
          const std::int64_t width = j0 + columns <= n ? columns : n - j0;
          team.team_barrier();  // the previous tile is no longer read
          for (int k = 0; k < (Dim > 0 ? Dim : dim); ++k)  // contiguous copies, one per coordinate
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, width),
                                 [&](const std::int64_t jj) { tile(jj, k) = points(j0 + jj, k); });
          team.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, part.count), [&](const std::int64_t r) {
            const std::int64_t local = part.first + r;
            const RowPoint<Dim, Points> own(points, row0 + local);
            for_columns<Space>(team, 0, width, [&](const std::int64_t jj) {
              const Scalar s = squared_distance<Dim>(own, tile, jj, dim);
              out(local, j0 + jj) = squared ? s : compat::math::sqrt(s);
            });
          });
        }
      });
}

// direct's team form: a team per block of rows, its threads across the columns. The workload's
// direct on host spaces (direct_flat.hpp: devices take blocks of rows x columns a thread).
template <class Space, class Points, class Out>
void direct_team(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                 int dim, bool squared) {
  with_dimension(dim, [&](auto fixed) { direct_rows<decltype(fixed)::value>(space, points, out, row0, rows, dim, squared); });
}

// The NumPy/CuPy form x2 - 2 x.y + y2: the cross term by KokkosBlas::gemm, then the norms added,
// clamped at zero (cancellation may leave small negatives) and the root taken. `norms` holds
// |p_i|^2 for every point. KokkosBlas::gemm of Kokkos Kernels 3.4 takes no execution space: it
// runs on the default instance, which is the one the harness passes.
template <class Space, class Points, class Norms, MINIAPP_KERNEL_UNIT>
void squared_norms(const Space& space, const Points& points, const Norms& norms, int dim) {
  using Scalar = typename Norms::non_const_value_type;
  Kokkos::parallel_for(
      "distance::norms", Kokkos::RangePolicy<Space>(space, 0, points.extent(0)), KOKKOS_LAMBDA(const std::int64_t i) {
        Scalar s = 0;
        for (int k = 0; k < dim; ++k) s += points(i, k) * points(i, k);
        norms(i) = s;
      });
}

template <class Space, class Points, class Norms, class Out, MINIAPP_KERNEL_UNIT>
void gemm(const Space& space, const Points& points, const Norms& norms, const Out& out, std::int64_t row0,
          std::int64_t rows, bool squared) {
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scalar = typename Out::non_const_value_type;
  const auto n = static_cast<std::int64_t>(points.extent(0));
  const auto block_rows = Kokkos::make_pair(row0, row0 + rows);
  const auto block_points = Kokkos::subview(points, block_rows, Kokkos::ALL());
  const auto block_out = Kokkos::subview(out, Kokkos::make_pair(std::int64_t(0), rows), Kokkos::ALL());
  compat::gemm("N", "T", Scalar(-2), block_points, points, Scalar(0), block_out);
  constexpr int per_team = Shape<Space>::rows_per_team;
  Kokkos::parallel_for(
      "distance::gemm-finish", row_policy(space, rows, per_team), KOKKOS_LAMBDA(const Member& team) {
        const TeamRows part = team_rows(team, rows, per_team);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, part.count), [&](const std::int64_t r) {
          const std::int64_t local = part.first + r;
          const Scalar ni = norms(row0 + local);
          for_columns<Space>(team, 0, n, [&](const std::int64_t j) {
            Scalar s = out(local, j) + ni + norms(j);
            s = s > Scalar(0) ? s : Scalar(0);
            out(local, j) = squared ? s : compat::math::sqrt(s);
          });
        });
      });
}

}  // namespace miniapp::distance::kernels
