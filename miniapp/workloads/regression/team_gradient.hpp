#pragma once
// The fused gradient sums shaped for a GPU: a team of warps per block of rows, one row at a time
// per warp with its vector lanes across the row's columns. FusedGradient's form (kernels.hpp),
// a thread per four rows with an array reduction of cols + 1 values per thread, reads X across
// rows, 51 values apart, and keeps cols + 1 partial sums per thread: on the H100 it took 1.41 ms
// per step at 10^6 x 51 float64 where one read of X takes 0.27 ms (issue 27). Here a warp reads
// a row as one contiguous stretch, its lanes keep the row's sums in the team's scratch (lane j's
// columns in its warp's row of it), and only the team's total joins the reduction. Used by
// fused_sums on device spaces where the scratch fits; written for every space, so that the host
// tests check its sums against FusedGradient's.

#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/spaces.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace miniapp::regression {

template <class Scalar, class Space>
struct TeamGradient {
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  using MemorySpace = typename Space::memory_space;
  using Scratch = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using value_type = Scalar[];
  // Warps of 32 lanes, 8 to a team, 32 rows per warp and team block: a block's sums join the
  // reduction once per 256 rows. One lane and one thread on host spaces.
  static constexpr int kLanes = is_host_space<Space>() ? 1 : 32;
  static constexpr int kThreads = is_host_space<Space>() ? 1 : 8;
  static constexpr std::int64_t kRowsPerTeam = kThreads * 32;

  Kokkos::View<const Scalar**, Kokkos::LayoutRight, MemorySpace> x;
  Kokkos::View<const Scalar*, Kokkos::LayoutRight, MemorySpace> y, beta;
  unsigned value_count;  // columns + 1

  static std::size_t scratch_bytes(std::size_t cols) { return Scratch::shmem_size(kThreads, cols + 1); }
  Policy policy(const Space& space) const {
    const auto n = static_cast<std::int64_t>(x.extent(0));
    Policy p(space, static_cast<int>((n + kRowsPerTeam - 1) / kRowsPerTeam), kThreads, kLanes);
    p.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes(value_count - 1)));
    return p;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team, value_type sums) const {
    const int cols = static_cast<int>(value_count) - 1, t = team.team_rank();
    const Scratch part(team.team_scratch(0), team.team_size(), value_count);
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, static_cast<int>(value_count)),
                         [&](const int j) { part(t, j) = Scalar(0); });
    team.team_barrier();  // the loss sum is zeroed by one lane and added to by lane 0
    const auto n = static_cast<std::int64_t>(x.extent(0));
    const std::int64_t first = team.league_rank() * kRowsPerTeam;
    const std::int64_t end = first + kRowsPerTeam < n ? first + kRowsPerTeam : n;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, first, end), [&](const std::int64_t i) {
      Scalar dot = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, cols), [&](const int j, Scalar& d) { d += x(i, j) * beta(j); }, dot);
      const Scalar r = dot - y(i);
      // Each lane adds to its own columns of its thread's row: no two lanes or threads share a value.
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, cols), [&](const int j) { part(t, j) += x(i, j) * r; });
      Kokkos::single(Kokkos::PerThread(team), [&]() { part(t, cols) += r * r; });
    });
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      for (int j = 0; j <= cols; ++j) {
        Scalar s = part(0, j);
        for (int o = 1; o < team.team_size(); ++o) s += part(o, j);
        sums[j] += s;
      }
    });
  }
};

// Whether TeamGradient's scratch fits a team of Space for `cols` columns (after initialize).
template <class Scalar, class Space>
bool team_gradient_fits(std::size_t cols) {
  const auto limit = compat::team_scratch_size_max<Space>(0);
  return limit && TeamGradient<Scalar, Space>::scratch_bytes(cols) <= *limit;
}

// One pass over X by TeamGradient: the gradient sums and the sum of squared residuals into sums.
template <class Space, class X, class Y, class Beta, class Sums>
void team_gradient_sums(const Space& space, const X& x, const Y& y, const Beta& beta, const Sums& sums) {
  using Scalar = typename Sums::non_const_value_type;
  const TeamGradient<Scalar, Space> f{x, y, beta, static_cast<unsigned>(x.extent(1) + 1)};
  Kokkos::parallel_reduce("regression::fused-teams", f.policy(space), f, sums);
}

}  // namespace miniapp::regression
