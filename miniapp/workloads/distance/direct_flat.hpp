#pragma once
// direct's device form: one flat RangePolicy, K entries per thread. `direct` picks the form per
// space (the team form of kernels.hpp on host spaces); the benchmarks time both forms and several
// K beside each other (distance-direct-team, distance-direct-flat-k<K>), the tests check that
// every form agrees with the team form bit for bit.

#include "miniapp/core/flat_index.hpp"
#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/workloads/distance/kernels.hpp"

#include <cstdint>

namespace miniapp::distance::kernels {

// direct without teams, shaped for GPUs: one flat RangePolicy, K entries per thread. Thread c of
// row i takes columns c, c + q, ..., c + (K - 1) q (q = ceil(n / K)), so neighbouring threads
// still write neighbouring entries, and each thread loads its K column points before it stores
// anything (the team form loads each column point after the previous store, one row per warp).
// The same squared_distance as the team form: the values agree bit for bit. The forms' times on a
// GPU: docs/tuning-notes.md ("distance: direct", its "Devices" entries).
template <int K, int Dim, class Space, class Points, class Out, MINIAPP_KERNEL_UNIT>
void direct_flat_rows(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                      int runtime_dim, bool squared) {
  static_assert(K >= 1 && K <= 16, "entries per thread");
  using Scalar = typename Out::non_const_value_type;
  const int dim = Dim > 0 ? Dim : runtime_dim;
  const auto n = static_cast<std::int64_t>(points.extent(0));
  const std::int64_t q = (n + K - 1) / K;
  const std::int64_t threads = rows * q;
  const FlatRows split(threads, q);
  Kokkos::parallel_for(
      "distance::direct-flat", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, threads),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t local = split.row(t);
        const std::int64_t c = t - local * q;
        const RowPoint<Dim, Points> own(points, row0 + local);
        Scalar s[K];
        for (int k = 0; k < K; ++k) {
          const std::int64_t j = c + k * q;
          s[k] = j < n ? squared_distance<Dim>(own, points, j, dim) : Scalar(0);
        }
        for (int k = 0; k < K; ++k) {
          const std::int64_t j = c + k * q;
          if (j < n) out(local, j) = squared ? s[k] : compat::math::sqrt(s[k]);
        }
      });
}

template <int K, class Space, class Points, class Out>
void direct_flat(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows,
                 int dim, bool squared) {
  with_dimension(dim, [&](auto fixed) {
    direct_flat_rows<K, decltype(fixed)::value>(space, points, out, row0, rows, dim, squared);
  });
}

// Entries per thread of direct's device form: 8 was the fastest of 1, 4 and 8 on the H200 at
// the sizes above 1024 in two sittings, and equal at 1024; 16 against 8 (2026-11-29, float32):
// 52.9 against 54.0 us at n = 4096, 142.7 against 153.4 us at 8192 (docs/tuning-notes.md).
inline constexpr int kDirectPerThread = 16;

// The workload's direct: the team form on host spaces, the flat form on devices.
template <class Space, class Points, class Out>
void direct(const Space& space, const Points& points, const Out& out, std::int64_t row0, std::int64_t rows, int dim,
            bool squared) {
  if constexpr (is_host_space<Space>()) {
    direct_team(space, points, out, row0, rows, dim, squared);
  } else {
    direct_flat<kDirectPerThread>(space, points, out, row0, rows, dim, squared);
  }
}

}  // namespace miniapp::distance::kernels
