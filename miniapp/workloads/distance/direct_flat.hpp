#pragma once
// direct's device form: one flat RangePolicy, K entries per thread. `direct` picks the form per
// space (the team form of kernels.hpp on host spaces); the benchmarks time both forms and several
// K beside each other (distance-direct-team, distance-direct-flat-k<K>), the tests check that
// every form agrees with the team form bit for bit.

#include "miniapp/core/flat_index.hpp"
#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/pack16.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/workloads/distance/kernels.hpp"

#include <cstddef>
#include <cstdint>

namespace miniapp::distance::kernels {

// direct without teams, shaped for GPUs: one flat RangePolicy, K entries per thread. Thread c of
// row i takes columns c, c + q, ..., c + (K - 1) q (q = ceil(n / K)), so neighbouring threads
// still write neighbouring entries, and each thread loads its K column points before it stores
// anything (the team form loads each column point after the previous store, one row per warp).
// The same squared_distance as the team form: the values agree bit for bit. The forms' times on a
// GPU: docs/tuning-notes.md ("distance: direct", its "Devices" entries).
// The flat forms' range: `blocks` blocks of rows (a row each in the flat form), q = ceil(n / K)
// threads a block, thread t of block split.row(t) taking columns t - block q + k q, k < K.
struct ColumnThreads {
  std::int64_t n, q, threads;
  FlatRows split;
  ColumnThreads(const std::int64_t points, const std::int64_t blocks, const int k)
      : n(points), q((points + k - 1) / k), threads(blocks * q), split(threads, q) {}
};

// Store false (a benchmark's bound probe, distance-direct-flat-k<K>-compute): every entry
// computed as with true, but a thread adds its K values and writes the sum only where it equals
// -n, which a sum of distances never does: the form's work without the output's bytes, which the
// compiler cannot drop since it cannot know that.
template <int K, int Dim, bool Store = true, class Space, class Points, class Out, MINIAPP_KERNEL_UNIT>
void direct_flat_rows(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                      int runtime_dim, bool squared) {
  static_assert(K >= 1 && K <= 16, "entries per thread");
  using Scalar = typename Out::non_const_value_type;
  const int dim = Dim > 0 ? Dim : runtime_dim;
  const ColumnThreads range(static_cast<std::int64_t>(points.extent(0)), rows, K);
  const std::int64_t n = range.n, q = range.q;
  const FlatRows split = range.split;
  Kokkos::parallel_for(
      "distance::direct-flat", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, range.threads),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t local = split.row(t);
        const std::int64_t c = t - local * q;
        const RowPoint<Dim, Points> own(points, row0 + local);
        Scalar s[K];
        for (int k = 0; k < K; ++k) {
          const std::int64_t j = c + k * q;
          s[k] = j < n ? squared_distance<Dim>(own, points, j, dim) : Scalar(0);
        }
        Scalar sum = 0;  // Store false only
        for (int k = 0; k < K; ++k) {
          const std::int64_t j = c + k * q;
          if (Store) {  // not `if constexpr`: nvcc's lambdas cannot first-capture inside one
            if (j < n) out(local, j) = squared ? s[k] : compat::math::sqrt(s[k]);
          } else {
            sum += squared ? s[k] : compat::math::sqrt(s[k]);
          }
        }
        if (!Store && sum == -Scalar(n)) out(local, c) = sum;
      });
}

template <int K, bool Store = true, class Space, class Points, class Out>
void direct_flat(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                 int dim, bool squared) {
  with_dimension(dim, [&](auto fixed) {
    direct_flat_rows<K, decltype(fixed)::value, Store>(space, points, out, row0, rows, dim, squared);
  });
}

// direct's device form, R rows a thread as well as K columns: the flat form stayed at the same
// share of a plain fill's rate whatever its K (docs/tuning-notes.md, "distance: direct"), so the
// loads in flight are not what bounds it; each of its entries costs the column point's dim loads and their address arithmetic besides the arithmetic
// of the distance, and a GPU thread issues them all. Here a thread loads its K column points once
// into registers and reuses them for R rows: per entry the loads fall from dim + dim / K to
// dim / R + dim / K. Thread c of row block b takes rows b R .. b R + R - 1 and the flat form's
// columns c, c + q, ... (q = ceil(n / K)), so a warp's stores stay contiguous. The same
// squared_distance as the team form: the values agree bit for bit. Dimensions read at run time
// (Dim 0) take the flat form.
// (HeldColumns: kernels.hpp, which symmetric's held form shares.)
template <int R, int K, int Dim, class Space, class Points, class Out, MINIAPP_KERNEL_UNIT>
void direct_block_rows(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                       int runtime_dim, bool squared) {
  static_assert(R >= 1 && R <= 8 && K >= 1 && K <= 16, "rows and entries per thread");
  if constexpr (Dim == 0) {
    direct_flat_rows<K, 0>(space, points, out, row0, rows, runtime_dim, squared);
  } else {
    using Scalar = typename Out::non_const_value_type;
    const ColumnThreads range(static_cast<std::int64_t>(points.extent(0)), (rows + R - 1) / R, K);
    Kokkos::parallel_for(
        "distance::direct-block", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, range.threads),
        KOKKOS_LAMBDA(const std::int64_t t) {
          const std::int64_t block = range.split.row(t), c = t - block * range.q;
          HeldColumns<Dim, Scalar, K> held;
          for (int k = 0; k < K; ++k) {
            const bool in = c + k * range.q < range.n;
            for (int d = 0; d < Dim; ++d) held.c[k][d] = in ? points(c + k * range.q, d) : Scalar(0);
          }
          for (int r = 0; r < R && block * R + r < rows; ++r) {
            const RowPoint<Dim, Points> own(points, row0 + block * R + r);
            for (int k = 0; k < K && c + k * range.q < range.n; ++k) {
              const Scalar s = squared_distance<Dim>(own, held, k, Dim);
              out(block * R + r, c + k * range.q) = squared ? s : compat::math::sqrt(s);
            }
          }
        });
  }
}

template <int R, int K, class Space, class Points, class Out>
void direct_block(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                  int dim, bool squared) {
  with_dimension(dim, [&](auto fixed) {
    direct_block_rows<R, K, decltype(fixed)::value>(space, points, out, row0, rows, dim, squared);
  });
}

// direct_block with 16-byte stores (prepared for GPUs, not the workload's form until timed): the
// block form issues, per entry, the distance's arithmetic, a square root and a store with its own
// 64-bit address, and its time on a GPU is its work and its bytes one after the other
// (docs/tuning-notes.md, "distance: direct"). Here a thread's K columns are K / W packs of W
// consecutive columns (W = 4 in float32, 2 in float64: Pack16), pack p of thread c being columns
// (c + p q) W .. + W - 1 (q = ceil(n / K)), so a warp's pack stores are still one contiguous run
// and each row of a block costs K / W stores instead of K. Needs every row of `out` to start on a
// 16-byte boundary and n a whole number of packs (packs_fit); elsewhere, and for dimensions read
// at run time, it is direct_block<R, K>. The same squared_distance: the same bits as every form.
template <class Out>
bool packs_fit(const Out& out) {
  using Scalar = typename Out::non_const_value_type;
  constexpr std::size_t w = Pack16<Scalar>::kValues;
  return out.stride(1) == 1 && out.stride(0) % w == 0 && out.extent(1) % w == 0 &&
         reinterpret_cast<std::uintptr_t>(out.data()) % 16 == 0;
}

template <int R, int K, int Dim, class Space, class Points, class Out, MINIAPP_KERNEL_UNIT>
void direct_packs_rows(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                       bool squared) {
  using Scalar = typename Out::non_const_value_type;
  constexpr int W = Pack16<Scalar>::kValues, P = K / W;
  static_assert(Dim > 0 && R >= 1 && R <= 8 && P >= 1 && P * W == K && K <= 16, "rows, packs a thread");
  const ColumnThreads range(static_cast<std::int64_t>(points.extent(0)) / W, (rows + R - 1) / R, P);
  Scalar* const data = out.data();
  const std::int64_t stride = static_cast<std::int64_t>(out.stride(0));
  Kokkos::parallel_for(
      "distance::direct-packs", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, range.threads),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t block = range.split.row(t), c = t - block * range.q;
        HeldColumns<Dim, Scalar, K> held;
        for (int p = 0; p < P; ++p) {
          const bool in = c + p * range.q < range.n;
          const std::int64_t j0 = (c + p * range.q) * W;
          for (int w = 0; w < W; ++w)
            for (int d = 0; d < Dim; ++d) held.c[p * W + w][d] = in ? points(j0 + w, d) : Scalar(0);
        }
        for (int r = 0; r < R && block * R + r < rows; ++r) {
          const RowPoint<Dim, Points> own(points, row0 + block * R + r);
          Scalar* const row = data + (block * R + r) * stride;
          for (int p = 0; p < P && c + p * range.q < range.n; ++p) {
            Pack16<Scalar> pack;
            for (int w = 0; w < W; ++w) {
              const Scalar s = squared_distance<Dim>(own, held, p * W + w, Dim);
              pack.v[w] = squared ? s : compat::math::sqrt(s);
            }
            store_pack<Space>(row + (c + p * range.q) * W, pack);
          }
        }
      });
}

template <int R, int K, class Space, class Points, class Out>
void direct_packs(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                  int dim, bool squared) {
  with_dimension(dim, [&](auto fixed) {
    constexpr int Dim = decltype(fixed)::value;
    if constexpr (Dim > 0) {
      if (packs_fit(out)) return direct_packs_rows<R, K, Dim>(space, points, out, row0, rows, squared);
    }
    direct_block_rows<R, K, Dim>(space, points, out, row0, rows, dim, squared);
  });
}

// direct's device form: blocks of kDirectBlockRows rows x kDirectPerThread columns a thread
// (direct_block), the fastest of the blocks timed against the flat form and the fill
// (`distance-direct-block-*`; the times are in docs/tuning-notes.md, "distance: direct").
inline constexpr int kDirectBlockRows = 4;
inline constexpr int kDirectPerThread = 8;

// The workload's direct: the team form on host spaces, blocks of rows x columns on devices.
template <class Space, class Points, class Out>
void direct(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows, int dim,
            bool squared) {
  if constexpr (is_host_space<Space>()) {
    direct_team(space, points, out, row0, rows, dim, squared);
  } else {
    direct_block<kDirectBlockRows, kDirectPerThread>(space, points, out, row0, rows, dim, squared);
  }
}

}  // namespace miniapp::distance::kernels
