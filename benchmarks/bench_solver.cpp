// Solver variants against LAPACK dgesv in the same run (issue: dense-blocked on one 2048 x 2048
// float64 system within 2x of dgesv; batched 100000 x 8 x 8 and 10000 x 32 x 32 faster than a
// loop calling dgesv per system on the same threads). The ratio is solver time / dgesv time.

#include "miniapp/workloads/solver/solver.hpp"

#include "host_blas.hpp"
#include "registry.hpp"
#include "timing.hpp"

#include <benchmark/benchmark.h>

#include <vector>

namespace miniapp::bench {

namespace {

solver::Params batch(std::size_t systems, int block_size = 128) {
  solver::Params p;
  p.systems = systems;
  p.block_size = block_size;
  return p;
}

template <class Space>
void solver_variant(benchmark::State& state, const std::string& variant) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto systems = static_cast<std::size_t>(state.range(1));
  const int block_size = state.range(2) > 0 ? static_cast<int>(state.range(2)) : 128;
  solver::Kernel<double, Space> k(batch(systems, block_size), variant, n);
  k.generate_inputs(42);
  for (Transferable* f : k.inputs()) f->copy_to_device();
  const Space space;
  time_iterations(state, space, [&] { k.compute(space); });
  rate_counters(state, k.work());
  for (Transferable* f : k.outputs()) f->copy_to_host();
  if (!k.verify(std::nullopt).passed) state.SkipWithError("verification failed");
}

#if defined(MINIAPP_HAVE_HOST_BLAS)
// The same systems through LAPACK: each iteration copies A and b into dgesv's work arrays (as
// compute() copies into its work Views), one system per iteration of a loop on the space's
// threads; a single system lets dgesv use the BLAS's own threads.
template <class Space>
void lapack_dgesv(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto systems = static_cast<std::size_t>(state.range(1));
  solver::Kernel<double, Space> k(batch(systems), "batched-thread", n);
  k.generate_inputs(42);
  const double* a = k.matrices().host.data();
  const double* b = k.rhs().host.data();
  const int order = static_cast<int>(n);
  const int concurrency = static_cast<int>(Space().concurrency());
  std::vector<double> lu(n * n * static_cast<std::size_t>(concurrency)), x(n * static_cast<std::size_t>(concurrency));
  std::vector<int> pivots(n * static_cast<std::size_t>(concurrency));
  std::vector<int> failures(systems, 0);
  const Space space;
  auto solve_one = [&](std::size_t s, std::size_t slot) {
    double* m = lu.data() + slot * n * n;
    double* r = x.data() + slot * n;
    // dgesv is column-major: transposing while copying solves A x = b, not A^T x = b.
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) m[j * n + i] = a[(s * n + i) * n + j];
    for (std::size_t i = 0; i < n; ++i) r[i] = b[s * n + i];
    const int one = 1;
    int info = 0;
    dgesv_(&order, &one, m, &order, pivots.data() + slot * n, r, &order, &info);
    failures[s] = info;
  };
  time_iterations(state, space, [&] {
    if (systems == 1) {
      solve_one(0, 0);
      return;
    }
    // Slots per thread: Kokkos host spaces number their threads 0..concurrency-1.
    Kokkos::parallel_for("bench::dgesv-loop", Kokkos::RangePolicy<Space>(space, 0, systems), [&](const std::size_t s) {
      solve_one(s, static_cast<std::size_t>(Space::impl_hardware_thread_id()));
    });
  });
  rate_counters(state, k.work());
  for (int f : failures)
    if (f != 0) state.SkipWithError("dgesv reported a singular system");
}
#endif

}  // namespace

MINIAPP_BENCHMARKS(register_solver_benchmarks) {
  // {n, systems, block size}: the three shapes.
  const std::vector<std::vector<std::int64_t>> batched = {{8, 100000, 0}, {32, 10000, 0}};
  const std::vector<std::int64_t> dense = {2048, 1, 128};
  for_each_tested_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    const std::string s = space_name<Space>();
    for (const char* variant : {"batched-thread", "batched-team", "batched-kokkos-kernels"}) {
      if (std::string(variant) == "batched-kokkos-kernels" && !compat::kHasBatchedPivotingSolve) continue;
      auto* b = benchmark::RegisterBenchmark((std::string("solver-") + variant + "/float64/" + s).c_str(),
                                            [variant](benchmark::State& st) { solver_variant<Space>(st, variant); });
      for (const auto& args : batched) b->Args(args);
      b->UseManualTime()->Unit(benchmark::kMillisecond);
    }
    if (compat::kHasKokkosKernels)
      benchmark::RegisterBenchmark(("solver-dense-blocked/float64/" + s).c_str(),
                                   [](benchmark::State& st) { solver_variant<Space>(st, "dense-blocked"); })
          ->Args(dense)->Args({2048, 1, 64})->Args({2048, 1, 256})->UseManualTime()->Unit(benchmark::kMillisecond);
#if defined(MINIAPP_HAVE_HOST_BLAS)
    if constexpr (is_host_space<Space>()) {
      auto* b = benchmark::RegisterBenchmark(("lapack-dgesv/float64/" + s).c_str(), lapack_dgesv<Space>);
      for (const auto& args : batched) b->Args({args[0], args[1]});
      b->Args({dense[0], dense[1]})->UseManualTime()->Unit(benchmark::kMillisecond);
    }
#endif
  });
}

}  // namespace miniapp::bench
