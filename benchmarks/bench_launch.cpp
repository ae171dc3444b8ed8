// What one kernel launch costs before it does any work, in each space and on each Kokkos version:
// a one-iteration RangePolicy and a one-team TeamPolicy (the distance kernels' shape), timed as
// every other benchmark is (fence, timer, work, fence). A kernel's time minus this is the time
// its work took: at small sizes (distance at n = 1024, a gradient step) the launch is most of it.

#include "miniapp/core/spaces.hpp"

#include "registry.hpp"
#include "timing.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>

namespace miniapp::bench {

namespace {

template <class Space>
void launch_range(benchmark::State& state) {
  Kokkos::View<int*, typename Space::memory_space> touched("touched", 1);
  const Space space;
  time_iterations(state, space, [&] {
    Kokkos::parallel_for(
        "bench::launch-range", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, 1),
        KOKKOS_LAMBDA(const std::int64_t e) { touched(e) += 1; });
  });
}

// The team shape the distance kernels launch on devices (8 threads of 32 lanes); one thread of
// one lane on host spaces.
template <class Space>
void launch_team(benchmark::State& state) {
  Kokkos::View<int*, typename Space::memory_space> touched("touched", 1);
  const Space space;
  constexpr int threads = is_host_space<Space>() ? 1 : 8, lanes = is_host_space<Space>() ? 1 : 32;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  time_iterations(state, space, [&] {
    Kokkos::parallel_for(
        "bench::launch-team", Kokkos::TeamPolicy<Space>(space, 1, threads, lanes), KOKKOS_LAMBDA(const Member& team) {
          Kokkos::single(Kokkos::PerTeam(team), [&] { touched(0) += 1; });
        });
  });
}

}  // namespace

MINIAPP_BENCHMARKS(register_launch_benchmarks) {
  for_each_tested_space([](auto tag) {
    using Space = typename decltype(tag)::type;
    const std::string s = space_name<Space>();
    benchmark::RegisterBenchmark(("launch-range/" + s).c_str(), launch_range<Space>)
        ->UseManualTime()->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("launch-team/" + s).c_str(), launch_team<Space>)
        ->UseManualTime()->Unit(benchmark::kMicrosecond);
  });
}

}  // namespace miniapp::bench
