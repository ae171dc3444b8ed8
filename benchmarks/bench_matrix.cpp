// Matrix workload against its bounds, measured in the same run (issue 4):
// - elementwise multiply vs a plain Kokkos copy over arrays of the same shape (GB/s, >= 80%);
// - gemm-kokkos-kernels vs the vendor dgemm_/sgemm_ called directly (GFLOP/s, >= 90% at 1024);
// - gemm-tiled (the best hand-written one) vs the vendor BLAS (>= 25%).
// Compare the counters of benchmarks with the same size, precision and space.

#include "miniapp/workloads/matrix/matrix.hpp"

#include "host_blas.hpp"
#include "registry.hpp"
#include "timing.hpp"

#include <benchmark/benchmark.h>

#include <string>
#include <utility>
#include <vector>

namespace miniapp::bench {

namespace {

// The seed's shape, (3, columns), large enough to leave every cache.
constexpr std::int64_t kElementwiseColumns = std::int64_t(1) << 24;
// ... and small enough for the three arrays (1.1 MiB) to stay in two cores' L2: on host spaces,
// x ** y's time per element there against the large size's tells whether memory or arithmetic
// bounds it.
constexpr std::int64_t kCachedColumns = std::int64_t(1) << 15;
constexpr std::int64_t kGemmSize = 1024;

template <class Scalar, class Space>
void copy(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(3 * state.range(0));
  Kokkos::View<Scalar*, typename Space::memory_space> src("src", n), dst("dst", n);
  Kokkos::deep_copy(src, Scalar(1));
  const Space space;
  time_iterations(state, space, [&] {
    Kokkos::parallel_for(
        "bench::copy", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t e) { dst(e) = src(e); });
  });
  rate_counters(state, {0, double(n * sizeof(Scalar)), double(n * sizeof(Scalar))});
}

template <class Space, class Kernel>
void run_kernel(benchmark::State& state, Kernel& k) {
  k.generate_inputs(42);
  for (Transferable* f : k.inputs()) f->copy_to_device();
  const Space space;
  time_iterations(state, space, [&] { k.compute(space); });
  rate_counters(state, k.work());
}

template <class Scalar, class Space>
void elementwise(benchmark::State& state, matrix::Operation op) {
  matrix::Params p;
  p.op = op;
  matrix::Elementwise<Scalar, Space> k(p, "elementwise", static_cast<std::size_t>(state.range(0)));
  run_kernel<Space>(state, k);
}

// pow as elementwise_strided computes it, or (Exp2) as elementwise_exp2 does, with its table.
template <bool Exp2, class Table>
auto power_of(const Table& table) {
  if constexpr (Exp2) {
    return matrix::Exp2Pow{table.data()};
  } else {
    return matrix::SpacePow{};
  }
}

// elementwise_strided, K elements per thread (device spaces), or with R > 1 elementwise_pipelined,
// R rounds of K, or with Exp2 elementwise_exp2<K>, on the same arrays as `elementwise`, checked
// against the host's reference like the workload's own result. Packs: elementwise_packs with K
// 16-byte packs a thread, pow the space's or (Exp2) pow_exp2's.
template <int K, class Space, int R = 1, bool Exp2 = false, bool Packs = false>
void elementwise_k(benchmark::State& state, matrix::Operation op) {
  matrix::Params p;
  p.op = op;
  matrix::Elementwise<float, Space> k(p, "elementwise", static_cast<std::size_t>(state.range(0)));
  k.generate_inputs(42);
  for (Transferable* f : k.inputs()) f->copy_to_device();
  const Space space;
  const auto table = pow_exp2::log_table(space);
  time_iterations(state, space, [&] {
    if constexpr (Packs) {
      matrix::elementwise_packs<K>(space, op, k.x().device, k.y().device, k.z().device, power_of<Exp2>(table));
    } else if constexpr (Exp2) {
      matrix::elementwise_exp2<K>(space, k.x().device, k.y().device, k.z().device, table);
    } else if constexpr (R > 1) {
      matrix::elementwise_pipelined<K, R>(space, op, k.x().device, k.y().device, k.z().device);
    } else {
      matrix::elementwise_strided<K>(space, op, k.x().device, k.y().device, k.z().device);
    }
  });
  k.z().copy_to_host();
  const Verification v = k.verify(std::nullopt);
  if (!v.passed) state.SkipWithError(("not verified: " + v.detail).c_str());
  rate_counters(state, k.work());
}

// x ** y's bound probe on devices: the workload's threads (K elements each, as
// elementwise_strided<K>) computing pow on values made from the element's index, with no array
// read or written; a thread writes the sum of its powers only where it equals -total, which a sum
// of powers of positive bases never does (and the compiler cannot know). Its time against the
// workload's and `x * y`'s (the same bytes, next to no arithmetic) says whether pow's
// instructions or the bytes bound `x ** y`, where no hardware counters can be read. Exp2: the
// same for elementwise_exp2's pow.
template <int K, class Space, bool Exp2 = false, MINIAPP_KERNEL_UNIT>
void power_compute(benchmark::State& state) {
  const std::int64_t total = matrix::Params{}.rows * state.range(0), q = (total + K - 1) / K;
  Kokkos::View<float*, typename Space::memory_space> sink("sink", 1);
  const float never = -static_cast<float>(total);
  const Space space;
  const auto table = pow_exp2::log_table(space);
  const auto power = power_of<Exp2>(table);
  time_iterations(state, space, [&] {
    Kokkos::parallel_for(
        "bench::power-compute", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, q),
        KOKKOS_LAMBDA(const std::int64_t e) {
          float sum = 0;
          for (int k = 0; k < K; ++k) {
            const std::int64_t i = e + k * q;  // x and y in (0, 1], as the inputs (positive_uniform)
            const float x = static_cast<float>((i & 1023) + 1) * (1.0f / 1024),
                        y = static_cast<float>(((i >> 10) & 1023) + 1) * (1.0f / 1024);
            sum += power(x, y);
          }
          if (sum == never) sink(0) = sum;
        });
  });
  state.SetLabel("bound probe: pow computed, no array read or written");
}

// gemm-tiled's tile shape, as the benchmarks label it.
std::string tile_label(const matrix::TileShape& t) {
  return "tile " + std::to_string(t.m) + "x" + std::to_string(t.n) + "x" + std::to_string(t.k);
}

template <class Scalar, class Space>
void gemm(benchmark::State& state, const std::string& variant) {
  matrix::Gemm<Scalar, Space> k(matrix::Params{}, variant, static_cast<std::size_t>(state.range(0)));
  run_kernel<Space>(state, k);
  if (variant == "gemm-tiled")
    state.SetLabel(tile_label(k.tiles()));
}

// gemm-tiled in one device form (the workload's picks the resident one where the team fits), on
// the workload's inputs and default tiles, verified like the workload's own result.
template <class Scalar, class Space>
void gemm_device_form(benchmark::State& state, const matrix::DeviceForm form) {
  matrix::Gemm<Scalar, Space> k(matrix::Params{}, "gemm-tiled", static_cast<std::size_t>(state.range(0)));
  k.generate_inputs(42);
  for (Transferable* f : k.inputs()) f->copy_to_device();
  const Space space;
  const auto alpha = Scalar(1), beta = Scalar(0);
  time_iterations(state, space, [&] {
    matrix::gemm_tiled(space, k.tiles(), alpha, k.a().device, k.b().device, beta, k.c0().device, k.c().device, form);
  });
  k.c().copy_to_host();
  const Verification v = k.verify(std::nullopt);
  if (!v.passed) state.SkipWithError(("not verified: " + v.detail).c_str());
  rate_counters(state, k.work());
  state.SetLabel(tile_label(k.tiles()));
}

#if defined(MINIAPP_HAVE_HOST_BLAS)
// The vendor BLAS on row-major data, as Kokkos Kernels calls it: C^T = B^T A^T in column-major.
template <class Scalar>
void vendor_gemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<Scalar> a(std::size_t(n) * n), b(a.size()), c(a.size());
  for (std::size_t e = 0; e < a.size(); ++e) {
    a[e] = static_cast<Scalar>(matrix::signed_uniform(42, e));
    b[e] = static_cast<Scalar>(matrix::signed_uniform(42, a.size() + e));
  }
  const Scalar alpha = 1, beta = 0;
  Kokkos::Timer timer;
  for (auto _ : state) {
    timer.reset();
    if constexpr (sizeof(Scalar) == 8)
      dgemm_("N", "N", &n, &n, &n, &alpha, b.data(), &n, a.data(), &n, &beta, c.data(), &n);
    else
      sgemm_("N", "N", &n, &n, &n, &alpha, b.data(), &n, a.data(), &n, &beta, c.data(), &n);
    state.SetIterationTime(timer.seconds());
  }
  const double nd = n;
  rate_counters(state, {2 * nd * nd * nd, 2 * nd * nd * sizeof(Scalar), nd * nd * sizeof(Scalar)});
}
#endif

}  // namespace

MINIAPP_BENCHMARKS(register_matrix_benchmarks) {
  for_each_tested_space([](auto tag) {
    using Space = typename decltype(tag)::type;
    const std::string s = space_name<Space>();
    benchmark::RegisterBenchmark(("copy/float32/" + s).c_str(), copy<float, Space>)
        ->Arg(kElementwiseColumns)->UseManualTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("matrix-elementwise-multiply/float32/" + s).c_str(),
                                 [](benchmark::State& st) { elementwise<float, Space>(st, matrix::Operation::Multiply); })
        ->Arg(kElementwiseColumns)->UseManualTime()->Unit(benchmark::kMillisecond);
    auto* power = benchmark::RegisterBenchmark(("matrix-elementwise-power/float32/" + s).c_str(), [](benchmark::State& st) {
      elementwise<float, Space>(st, matrix::Operation::Power);
    });
    power->Arg(kElementwiseColumns)->UseManualTime()->Unit(benchmark::kMillisecond);
    if constexpr (is_host_space<Space>()) power->Arg(kCachedColumns);
    if constexpr (!is_host_space<Space>()) {
      const auto strided = [&](const std::string& name, void (*f)(benchmark::State&, matrix::Operation),
                               matrix::Operation op) {
        benchmark::RegisterBenchmark((name + "/float32/" + s).c_str(), [f, op](benchmark::State& st) { f(st, op); })
            ->Arg(kElementwiseColumns)->UseManualTime()->Unit(benchmark::kMillisecond);
      };
      // K = 1 is one element per thread, what `elementwise` ran on devices before it took 4.
      strided("matrix-elementwise-power-k1", elementwise_k<1, Space>, matrix::Operation::Power);
      strided("matrix-elementwise-multiply-k1", elementwise_k<1, Space>, matrix::Operation::Multiply);
      strided("matrix-elementwise-power-k2", elementwise_k<2, Space>, matrix::Operation::Power);
      strided("matrix-elementwise-power-k4", elementwise_k<4, Space>, matrix::Operation::Power);
      strided("matrix-elementwise-power-k8", elementwise_k<8, Space>, matrix::Operation::Power);
      strided("matrix-elementwise-multiply-k4", elementwise_k<4, Space>, matrix::Operation::Multiply);
      // R rounds of K a thread, each round's loads in flight while the previous is computed
      // (registers, ptxas sm_90, Kokkos 4.6.01: the strided form's K = 4 32 and K = 8 56, so K = 8
      // ran at 56% of the resident threads; here k1-r8 32, k2-r8 40, k4-r4 56)
      strided("matrix-elementwise-power-pipelined-k1-r8", elementwise_k<1, Space, 8>, matrix::Operation::Power);
      strided("matrix-elementwise-power-pipelined-k2-r8", elementwise_k<2, Space, 8>, matrix::Operation::Power);
      strided("matrix-elementwise-power-pipelined-k4-r4", elementwise_k<4, Space, 4>, matrix::Operation::Power);
      benchmark::RegisterBenchmark(("matrix-elementwise-power-compute/float32/" + s).c_str(),
                                   power_compute<matrix::kDeviceElementsPerThread, Space>)
          ->Arg(kElementwiseColumns)->UseManualTime()->Unit(benchmark::kMillisecond);
      // pow by pow_exp2 (prepared): the float-float logarithm, the device's exp2f
      strided("matrix-elementwise-power-exp2-k4", elementwise_k<4, Space, 1, true>, matrix::Operation::Power);
      benchmark::RegisterBenchmark(("matrix-elementwise-power-exp2-k4-compute/float32/" + s).c_str(),
                                   power_compute<matrix::kDeviceElementsPerThread, Space, true>)
          ->Arg(kElementwiseColumns)->UseManualTime()->Unit(benchmark::kMillisecond);
      // 16-byte packs (prepared): one load of x, one of y and one store of z a pack of 4 values,
      // one or two packs a thread, pow the space's or pow_exp2's
      strided("matrix-elementwise-power-packs-p1", elementwise_k<1, Space, 1, false, true>, matrix::Operation::Power);
      strided("matrix-elementwise-power-packs-p2", elementwise_k<2, Space, 1, false, true>, matrix::Operation::Power);
      strided("matrix-elementwise-multiply-packs-p1", elementwise_k<1, Space, 1, false, true>,
              matrix::Operation::Multiply);
      strided("matrix-elementwise-power-exp2-packs-p1", elementwise_k<1, Space, 1, true, true>,
              matrix::Operation::Power);
    }
    for (const char* variant : {"gemm-naive", "gemm-tiled", "gemm-kokkos-kernels"}) {
      if (std::string(variant) == "gemm-kokkos-kernels" && !compat::kHasKokkosKernels) continue;
      // The naive kernel takes seconds at 1024; at 512 it still shows its rate.
      const std::int64_t size = std::string(variant) == "gemm-naive" ? kGemmSize / 2 : kGemmSize;
      benchmark::RegisterBenchmark(("matrix-" + std::string(variant) + "/float64/" + s).c_str(),
                                   [variant](benchmark::State& st) { gemm<double, Space>(st, variant); })
          ->Arg(size)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("matrix-" + std::string(variant) + "/float32/" + s).c_str(),
                                   [variant](benchmark::State& st) { gemm<float, Space>(st, variant); })
          ->Arg(size)->UseManualTime()->Unit(benchmark::kMillisecond);
    }
    if constexpr (!is_host_space<Space>()) {
      // The resident form (C in registers over all of K, the device default) against the
      // streaming one it replaced (faster on the H200), at 1024 and 4096.
      for (const auto& [name, form] : {std::pair{"resident", matrix::DeviceForm::resident},
                                       std::pair{"streaming", matrix::DeviceForm::streaming}}) {
        const matrix::DeviceForm f = form;
        benchmark::RegisterBenchmark(("matrix-gemm-tiled-" + std::string(name) + "/float64/" + s).c_str(),
                                     [f](benchmark::State& st) { gemm_device_form<double, Space>(st, f); })
            ->Arg(kGemmSize)->Arg(4 * kGemmSize)->UseManualTime()->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("matrix-gemm-tiled-" + std::string(name) + "/float32/" + s).c_str(),
                                     [f](benchmark::State& st) { gemm_device_form<float, Space>(st, f); })
            ->Arg(kGemmSize)->Arg(4 * kGemmSize)->UseManualTime()->Unit(benchmark::kMillisecond);
      }
    }
  });
#if defined(MINIAPP_HAVE_HOST_BLAS)
  benchmark::RegisterBenchmark("vendor-dgemm/float64/host", vendor_gemm<double>)
      ->Arg(kGemmSize)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("vendor-sgemm/float32/host", vendor_gemm<float>)
      ->Arg(kGemmSize)->UseManualTime()->Unit(benchmark::kMillisecond);
#endif
}

}  // namespace miniapp::bench
