#pragma once
// The fused variant's steps of a fit all in one parallel region, on host spaces of more than one
// thread: the threads it runs with, its scratch, and the region itself. The launches it replaces
// (a reduction and an update per step) and the update rule both forms apply are in kernels.hpp.

#include "miniapp/core/host_simd.hpp"
#include "miniapp/core/interrupt.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/workloads/regression/kernels.hpp"
#include "miniapp/workloads/regression/packed_gradient.hpp"

#include <Kokkos_Core.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace miniapp::regression {

// The threads a host space would run the steps of a fit with in one parallel region: its
// concurrency, as far as one team of its threads may have it; 1 where that is all there is (Serial)
// or the space is a device.
template <class Space>
int fused_region_threads(const Space& space) {
  if constexpr (!is_host_space<Space>()) {
    (void)space;
    return 1;
  } else {
    const Kokkos::TeamPolicy<Space> one(space, 1, 1);
    const auto probe = [](const typename Kokkos::TeamPolicy<Space>::member_type&) {};
    const int most = one.team_size_max(probe, Kokkos::ParallelForTag());
    const int threads = static_cast<int>(space.concurrency());
    return threads < most ? threads : most;
  }
}

// Scalars between two rows of cols + 1 (or fewer) values that different threads write, in
// fused_steps_in_one_region: rounded up to a cache line so that no two threads write one line.
template <class Scalar>
std::size_t thread_row_stride(std::size_t cols) {
  const std::size_t line = 64 / sizeof(Scalar);
  return (cols + 1 + line - 1) / line * line;
}

// Scalars of the scratch fused_steps_in_one_region needs: two rows of partial sums and one copy of
// beta per thread.
template <class Scalar>
std::size_t region_scratch_size(int threads, std::size_t cols) {
  return 3 * static_cast<std::size_t>(threads) * thread_row_stride<Scalar>(cols);
}

// Element j of the sums of `count` threads, each a row of `stride` values from `rows`, added up in
// thread order.
template <class Scalar>
struct ThreadTotals {
  const Scalar* rows;
  std::int64_t stride, count;
  KOKKOS_INLINE_FUNCTION Scalar operator[](const std::int64_t j) const {
    Scalar s = rows[j];
    for (std::int64_t o = 1; o < count; ++o) s += rows[o * stride + j];
    return s;
  }
};

// The last step whose partial sums one thread of fused_steps_in_one_region has written, + 1, on
// a cache line of its own. A thread publishes its sums with a release store and waits for the
// others' with acquire loads: one cache line each way per thread and step, where a team barrier
// and then the reads of the other threads' sums were several (on a 2-core Xeon the barrier cost
// more than a step of 1000 samples).
struct alignas(64) StepsPublished {
  std::atomic<std::int64_t> steps{0};
};

// Waits until `flag` says that at least `steps` steps are published.
inline void wait_for_steps(const std::atomic<std::int64_t>& flag, const std::int64_t steps) {
  while (flag.load(std::memory_order_acquire) < steps) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }
}

// The steps fused_steps_in_one_region ran: all of them, or those up to the one after which a
// signal was seen (`signalled_at`, the largest int64 when none was).
inline std::int64_t steps_run(const std::int64_t signalled_at, const std::int64_t steps) {
  return signalled_at < steps ? signalled_at + 1 : steps;
}

// The `steps` steps of a fit by the fused variant on a host space of more than one thread, in one
// parallel region of one team, the threads meeting once per step, instead of a reduction launch
// and an update launch per step (a fork and a join each, which on small problems cost more than
// the step itself: docs/performance.md measures both forms).
// - Each thread sums a contiguous share of the rows into its row of partial sums; rows of even and
//   odd steps alternate, so a thread that is a step ahead never writes a row still being read.
// - A thread publishes its step (StepsPublished) and waits until every other thread has published
//   the same step; then every thread adds all threads' partial sums up, in thread order, and applies
//   gradient_step to its own copy of beta: the same operations on the same values, so every copy
//   stays equal, and the threads need not meet again before the next step.
// - Thread 0 records the loss, and at the end writes beta, the lowest loss and the divergence back
//   into the fit.
// - Thread 0 looks for a signal after each step; the threads stop together at the step after the
//   one where it saw it: a flag set before thread 0 publishes a step is seen alike by every thread
//   that waited for that step.
// `scratch` holds region_scratch_size values. Returns the number of steps run: `steps`, or fewer
// after a signal.
template <class Space, class X, class Y, class F, class Scalar, class Scratch>
std::int64_t fused_steps_in_one_region(const Space& space, const X& x, const Y& y, const StepUpdate<F, Scalar>& u,
                                       const Scratch& scratch, int threads, std::int64_t steps) {
  using MemorySpace = typename Space::memory_space;
  using Row = Kokkos::View<Scalar*, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::size_t n = x.extent(0), cols = x.extent(1);
  const auto stride = static_cast<std::int64_t>(thread_row_stride<Scalar>(cols));
  constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
  std::atomic<std::int64_t> signalled_at{kNone};
  std::vector<StepsPublished> published(static_cast<std::size_t>(threads));
  const auto run = [&](const auto& sums_of, const std::int64_t units) {
    std::atomic<std::int64_t>* signalled = &signalled_at;
    StepsPublished* const flags = published.data();
    const auto fit = u.fit;
    Kokkos::parallel_for(
        "regression::fused_steps", Kokkos::TeamPolicy<Space>(space, 1, threads),
        [=](const typename Kokkos::TeamPolicy<Space>::member_type& team) {
          const std::int64_t t = team.team_rank(), count = team.team_size();
          const auto c = static_cast<std::int64_t>(cols);
          Scalar* const partial[2] = {scratch.data() + t * stride, scratch.data() + (count + t) * stride};
          Scalar* const beta = scratch.data() + (2 * count + t) * stride;
          for (std::int64_t j = 0; j < c; ++j) beta[j] = fit.beta(j);
          auto mine = sums_of;
          mine.beta = Row(beta, cols);
          Scalar lowest = fit.best(0), floor = fit.best(1);
          std::int64_t diverged_at = fit.diverged_at(0);
          const std::int64_t lo = units * t / count, hi = units * (t + 1) / count;
          for (std::int64_t k = 0; k < steps; ++k) {
            Scalar* const sums = partial[k & 1];
            for (std::int64_t j = 0; j <= c; ++j) sums[j] = Scalar(0);
            for (std::int64_t i = lo; i < hi; ++i) mine(i, sums);
            flags[t].steps.store(k + 1, std::memory_order_release);
            for (std::int64_t o = 0; o < count; ++o)
              if (o != t) wait_for_steps(flags[o].steps, k + 1);
            if (signalled->load(std::memory_order_relaxed) < k) break;
            const ThreadTotals<Scalar> totals{scratch.data() + (k & 1) * count * stride, stride, count};
            const Scalar l = totals[c] * u.inv_n;
            gradient_step(k, l, u.step, u.growth, u.floor_scale, lowest, floor, diverged_at, beta, totals, c);
            if (t == 0) {
              fit.loss(k) = l;
              if (interrupt_requested()) signalled->store(k, std::memory_order_relaxed);
            }
          }
          if (t == 0) {
            for (std::int64_t j = 0; j < c; ++j) fit.beta(j) = beta[j];
            fit.best(0) = lowest;
            fit.best(1) = floor;
            fit.diverged_at(0) = diverged_at;
          }
        });
  };
#if MINIAPP_HOST_SIMD
  if (cols >= static_cast<std::size_t>(simd::Pack<Scalar>::width)) {
    const PackedGradient<Scalar, MemorySpace> f{x, y, u.fit.beta, static_cast<unsigned>(cols + 1)};
    run(f, f.calls(n));
    return steps_run(signalled_at.load(), steps);
  }
#endif
  const FusedGradient<Scalar, MemorySpace> f{x, y, u.fit.beta, static_cast<unsigned>(cols + 1)};
  run(f, f.blocks(n));
  return steps_run(signalled_at.load(), steps);
}

}  // namespace miniapp::regression
