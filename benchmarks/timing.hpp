#pragma once
// Manual timing shared by every benchmark: fence, timer, work, fence, as the harness does, and
// rate counters from the workload's declared work.

#include "miniapp/core/measurement.hpp"

#include <Kokkos_Core.hpp>
#include <benchmark/benchmark.h>

namespace miniapp::bench {

// `per` divides each iteration's time and work, e.g. the gradient steps one call runs.
template <class Space, class Work>
void time_iterations(benchmark::State& state, const Space& space, Work&& work, double per = 1) {
  Kokkos::Timer timer;
  for (auto _ : state) {
    space.fence();
    timer.reset();
    work();
    space.fence();
    state.SetIterationTime(timer.seconds() / per);
  }
}

// GB/s always; GFLOP/s where the work has flops.
inline void rate_counters(benchmark::State& state, const WorkEstimate& w, double per = 1) {
  state.counters["GB/s"] =
      benchmark::Counter((w.bytes_read + w.bytes_written) / per, benchmark::Counter::kIsIterationInvariantRate);
  if (w.flops > 0)
    state.counters["GFLOP/s"] = benchmark::Counter(w.flops / per, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace miniapp::bench
