// Gradient-descent steps against the bandwidth bound of reading X once: a plain Kokkos sum over
// the same N x (P+1) Scalars (16 independent partial sums per chunk, so it is bound by memory,
// not by the latency of one chain of additions), measured in the same run (issue 6: `fused` within 1.25x of it at
// N = 10^6, P = 50 on OpenMP). Times are per gradient step.

#include "miniapp/workloads/regression/regression.hpp"

#include "registry.hpp"
#include "timing.hpp"

#include <benchmark/benchmark.h>

namespace miniapp::bench {

namespace {

constexpr std::int64_t kStepsPerFit = 10;

template <class Scalar, class Space>
void stream_read(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto cols = static_cast<std::size_t>(state.range(1)) + 1;
  constexpr std::int64_t kChunk = 16;
  const std::int64_t chunks = static_cast<std::int64_t>((n * cols + kChunk - 1) / kChunk);
  Kokkos::View<Scalar*, Kokkos::LayoutRight, typename Space::memory_space> x("x", chunks * kChunk);
  Kokkos::deep_copy(x, Scalar(1));
  const Space space;
  Kokkos::View<Scalar, typename Space::memory_space> sum("sum");
  time_iterations(state, space, [&] {
    Kokkos::parallel_reduce(
        "bench::stream_read", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, chunks),
        KOKKOS_LAMBDA(const std::int64_t c, Scalar& s) {
          Scalar part[kChunk];
          for (std::int64_t l = 0; l < kChunk; ++l) part[l] = x(c * kChunk + l);
          for (std::int64_t w = kChunk / 2; w > 0; w /= 2)
            for (std::int64_t l = 0; l < w; ++l) part[l] += part[l + w];
          s += part[0];
        },
        sum);
  });
  rate_counters(state, {0, static_cast<double>(n * cols * sizeof(Scalar)), 0});
}

// One fit of kStepsPerFit steps, reported per step.
template <class Scalar, class Space>
void gradient_steps(benchmark::State& state, const std::string& variant) {
  const auto n = static_cast<std::size_t>(state.range(0));
  regression::Params p;
  p.features = static_cast<int>(state.range(1));
  p.iterations = kStepsPerFit;
  regression::Kernel<Scalar, Space> k(p, variant, n);
  k.generate_inputs(42);
  for (Transferable* f : k.inputs()) f->copy_to_device();
  const Space space;
  time_iterations(state, space, [&] { k.compute(space); }, kStepsPerFit);
  rate_counters(state, k.work(), kStepsPerFit);
}

template <class Scalar>
void register_for_precision(const std::string& precision) {
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    const std::string s = space_name<Space>();
    auto shapes = [](benchmark::internal::Benchmark* b) {
      b->Args({1000000, 50})->Args({1000000, 1})->UseManualTime()->Unit(benchmark::kMillisecond);
    };
    shapes(benchmark::RegisterBenchmark(("regression-stream-read/" + precision + "/" + s).c_str(),
                                        stream_read<Scalar, Space>));
    for (const VariantInfo& v : regression::RegressionWorkload::variants())
      shapes(benchmark::RegisterBenchmark(
          ("regression-" + v.name + "/" + precision + "/" + s).c_str(),
          [name = v.name](benchmark::State& st) { gradient_steps<Scalar, Space>(st, name); }));
  });
}

}  // namespace

MINIAPP_BENCHMARKS(register_regression_benchmarks) {
  register_for_precision<float>("float32");
  register_for_precision<double>("float64");
}

}  // namespace miniapp::bench
