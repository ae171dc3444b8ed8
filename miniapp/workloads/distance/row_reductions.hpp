#pragma once
// The distance workload's per-row reductions (output row-min and row-sum): the kernels of
// kernels.hpp's shapes, without the matrix.

#include "miniapp/workloads/distance/kernels.hpp"

#include <cstdint>

namespace miniapp::distance::kernels {

// f(i, own) for each row i of the team's part of rows [row0, row0 + rows) of row_policy, by the
// team's threads; own is point i.
template <class Member, class Points, class F>
KOKKOS_INLINE_FUNCTION void for_each_own_row(const Member& team, const Points& points, const std::int64_t row0,
                                             const std::int64_t rows, const int per_team, const F& f) {
  const TeamRows part = team_rows(team, rows, per_team);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, part.count), [&](const std::int64_t r) {
    const std::int64_t i = row0 + part.first + r;
    f(i, RowPoint<0, Points>(points, i));
  });
}

// Per-row reductions without the matrix: the nearest other point (distance and index) and the
// sum of the distances, O(N) memory. Rows [row0, row0 + rows) against all N points, row i into
// element i - row0: the whole problem, or one rank's part of it (each row is computed the same
// way wherever it is, so the parts together equal the whole bit for bit).
template <class Space, class Points, class Nearest, class Index, MINIAPP_KERNEL_UNIT>
void row_min(const Space& space, const Points& points, const Nearest& nearest, const Index& index, int dim,
             bool squared, std::int64_t row0, std::int64_t rows) {
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scalar = typename Nearest::non_const_value_type;
  using MinLoc = Kokkos::MinLoc<Scalar, std::int64_t>;
  const auto n = static_cast<std::int64_t>(points.extent(0));
  constexpr int per_team = Shape<Space>::rows_per_team;
  Kokkos::parallel_for(
      "distance::row-min", row_policy(space, rows, per_team), KOKKOS_LAMBDA(const Member& team) {
        for_each_own_row(team, points, row0, rows, per_team, [&](const std::int64_t i, const RowPoint<0, Points>& own) {
          typename MinLoc::value_type best;
          reduce_columns<Space, typename MinLoc::value_type>(
              team, n, MinLoc(best),
              [&](const std::int64_t j, typename MinLoc::value_type& acc) {
                const Scalar s = squared_distance<0>(own, points, j, dim);
                if (j != i && (s < acc.val || (s == acc.val && j < acc.loc))) {
                  acc.val = s;
                  acc.loc = j;
                }
              });
          Kokkos::single(Kokkos::PerThread(team), [&] {
            const bool found = best.loc >= 0 && best.loc < n;
            nearest(i - row0) = !found ? Kokkos::reduction_identity<Scalar>::min()
                                       : (squared ? best.val : compat::math::sqrt(best.val));
            index(i - row0) = found ? best.loc : -1;
          });
        });
      });
}

template <class Space, class Points, class Sums, MINIAPP_KERNEL_UNIT>
void row_sum(const Space& space, const Points& points, const Sums& sums, int dim, bool squared, std::int64_t row0,
             std::int64_t rows) {
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scalar = typename Sums::non_const_value_type;
  const auto n = static_cast<std::int64_t>(points.extent(0));
  constexpr int per_team = Shape<Space>::rows_per_team;
  Kokkos::parallel_for(
      "distance::row-sum", row_policy(space, rows, per_team), KOKKOS_LAMBDA(const Member& team) {
        for_each_own_row(team, points, row0, rows, per_team, [&](const std::int64_t i, const RowPoint<0, Points>& own) {
          // Summed in double: N terms of one sign, so the sum keeps the entries' relative accuracy.
          double total = 0;
          reduce_columns<Space, double>(
              team, n, total,
              [&](const std::int64_t j, double& acc) {
                const Scalar s = squared_distance<0>(own, points, j, dim);
                acc += static_cast<double>(squared ? s : compat::math::sqrt(s));
              });
          Kokkos::single(Kokkos::PerThread(team), [&] { sums(i - row0) = static_cast<Scalar>(total); });
        });
      });
}

}  // namespace miniapp::distance::kernels
