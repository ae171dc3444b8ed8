// Distance matrix against the bandwidth bound of writing it: plain fills of the same N x N View,
// measured in the same run (issue 28: direct at >= 70% of the fastest fill's bandwidth). Three
// fills, since which one is fastest depends on the space and the machine: one element per index of
// a 2-D MDRangePolicy (`fill`), one flat RangePolicy over the span (`fill-flat`), and
// Kokkos::deep_copy of a value (`fill-deep-copy`, the library's own fill). `fill-stream` (host
// spaces): the same bytes by direct's non-temporal stores. `distance-direct-squared`: direct
// without the square roots.

#include "miniapp/core/pack16.hpp"
#include "miniapp/workloads/distance/direct_flat.hpp"
#include "miniapp/workloads/distance/distance.hpp"

#include "registry.hpp"
#include "timing.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>

namespace miniapp::bench {

namespace {

template <class Scalar, class Space>
void fill(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::memory_space> v("fill", n, n);
  const Space space;
  const auto extent = static_cast<std::int64_t>(n);
  time_iterations(state, space, [&] {
    Kokkos::parallel_for("bench::fill", Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {0, 0}, {extent, extent}),
                         KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) { v(i, j) = Scalar(1); });
  });
  rate_counters(state, {0, 0, static_cast<double>(n * n * sizeof(Scalar))});
}

// K values per thread, a K-th of the View apart (neighbouring threads write neighbouring values):
// on the H200 one value per thread wrote slower than direct at 4 per thread, as elementwise x * y
// did before it took 4 per thread (docs/tuning-notes.md, "distance: direct").
template <class Scalar, class Space, int K = 1>
void fill_flat(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::memory_space> v("fill", n, n);
  Scalar* const data = v.data();
  const auto span = static_cast<std::int64_t>(v.span());
  const std::int64_t q = (span + K - 1) / K;
  const Space space;
  time_iterations(state, space, [&] {
    Kokkos::parallel_for("bench::fill-flat", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, q),
                         KOKKOS_LAMBDA(const std::int64_t t) {
                           for (int k = 0; k < K; ++k)
                             if (t + k * q < span) data[t + k * q] = Scalar(1);
                         });
  });
  rate_counters(state, {0, 0, static_cast<double>(n * n * sizeof(Scalar))});
}

// The same with 16-byte stores: K values a thread as K / 4 packs (Pack16), a (K / 4)-th of the
// View apart, so a warp's stores are one contiguous run: the bound of direct's pack form
// (kernels::direct_packs), which writes the output so.
template <class Space, int K>
void fill_packs(benchmark::State& state) {
  using Pack = Pack16<float>;
  static_assert(K % Pack::kValues == 0, "whole packs a thread");
  const auto n = static_cast<std::size_t>(state.range(0));
  Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space> v("fill", n, n);
  float* const data = v.data();
  const auto packs = static_cast<std::int64_t>(v.span() / Pack::kValues);  // n a multiple of 4: all of it
  constexpr int P = K / Pack::kValues;
  const std::int64_t q = (packs + P - 1) / P;
  const Space space;
  time_iterations(state, space, [&] {
    Kokkos::parallel_for("bench::fill-packs", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, q),
                         KOKKOS_LAMBDA(const std::int64_t t) {
                           Pack ones;
                           for (int w = 0; w < Pack::kValues; ++w) ones.v[w] = 1.0f;
                           for (int p = 0; p < P; ++p)
                             if (t + p * q < packs) store_pack<Space>(data + (t + p * q) * Pack::kValues, ones);
                         });
  });
  rate_counters(state, {0, 0, static_cast<double>(n * n * sizeof(float))});
}

template <class Scalar, class Space>
void fill_deep_copy(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::memory_space> v("fill", n, n);
  const Space space;
  time_iterations(state, space, [&] { Kokkos::deep_copy(space, v, Scalar(1)); });
  rate_counters(state, {0, 0, static_cast<double>(n * n * sizeof(Scalar))});
}

#if MINIAPP_HOST_STREAM_STORES
// The bytes of an N x N View written the way direct writes an output over
// kStreamOutputBytes (a chunk per row in L1, streamed out by simd::stream_copy), with nothing
// computed: the rate direct's stores can reach on host spaces, beside the plain fills' rate.
template <class Space>
void fill_stream(benchmark::State& state) {
  const auto n = static_cast<std::int64_t>(state.range(0));
  Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space> v("fill", n, n);
  const Space space;
  time_iterations(state, space, [&] {
    Kokkos::parallel_for(
        "bench::fill-stream", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n),
        [=](const std::int64_t i) {
          constexpr std::int64_t kChunk = distance::kernels::kStreamChunkBytes / sizeof(float);
          float chunk[kChunk];
          for (std::int64_t j = 0; j < kChunk; ++j) chunk[j] = 1.0f;
          for (std::int64_t j0 = 0; j0 < n; j0 += kChunk) simd::stream_copy(&v(i, j0), chunk, std::min(kChunk, n - j0));
          simd::stream_fence();
        });
  });
  rate_counters(state, {0, 0, static_cast<double>(n * n * sizeof(float))});
}
#endif

template <class Scalar, class Space>
void distance_matrix(benchmark::State& state, const std::string& variant, const bool squared = false) {
  const auto n = static_cast<std::size_t>(state.range(0));
  distance::Params p;
  p.squared = squared;
  distance::Kernel<Scalar, Space> k(p, variant, n);
  k.generate_inputs(42);
  for (Transferable* f : k.inputs()) f->copy_to_device();
  const Space space;
  time_iterations(state, space, [&] { k.compute(space); });
  rate_counters(state, k.work());
}

// One device form of a variant into the kernel's own matrix after the same coordinate-major copy
// as the workload's, verified like its result: run(space, coordinates, out, rows, dim). A bound
// probe (written false: the form's work without its stores, nothing to verify) reports its time
// alone. Read::given: no copy, the form reads the points as the kernel holds them (a point's
// coordinates side by side), which a form whose column points are loaded once for several rows
// may afford: the copy is a launch of its own before every matrix.
enum class Read { coordinate_major, given };

template <class Space, Read read = Read::coordinate_major, class Run>
void distance_form(benchmark::State& state, const char* variant, const Run& run, const bool written = true) {
  const auto n = static_cast<std::size_t>(state.range(0));
  distance::Params p;
  distance::Kernel<float, Space> k(p, variant, n);
  k.generate_inputs(42);
  for (Transferable* f : k.inputs()) f->copy_to_device();
  Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space> coordinates("coordinates", n, p.dim);
  const auto out = k.distances().device;
  const Space space;
  time_iterations(state, space, [&] {
    if constexpr (read == Read::given) {
      run(space, k.points().device, out, static_cast<std::int64_t>(n), p.dim);
    } else {
      distance::kernels::coordinate_major(space, k.points().device, coordinates, p.dim);
      run(space, coordinates, out, static_cast<std::int64_t>(n), p.dim);
    }
  });
  if (!written) {
    state.SetLabel("bound probe: the entries computed, not written");
    return;
  }
  k.distances().copy_to_host();
  const Verification v = k.verify(std::nullopt);
  if (!v.passed) state.SkipWithError(("not verified: " + v.detail).c_str());
  rate_counters(state, k.work());
}

// direct's forms: the flat form with K entries per thread (kernels::direct_flat), or with K = 0
// the team form (kernels::direct_team, the form devices ran before the flat one); with R > 1, R
// rows and K columns a thread (kernels::direct_block), with Packs in 16-byte stores
// (kernels::direct_packs); read: the points after the workload's coordinate-major copy, or as given.
template <int K, class Space, int R = 1, bool Packs = false, Read read = Read::coordinate_major>
void distance_direct_form(benchmark::State& state) {
  distance_form<Space, read>(
      state, "direct",
      [](const Space& space, const auto& coordinates, const auto& out, std::int64_t rows, int dim) {
        if constexpr (K == 0) {
          distance::kernels::direct_team(space, coordinates, out, 0, rows, dim, false);
        } else if constexpr (Packs) {
          distance::kernels::direct_packs<R, K>(space, coordinates, out, 0, rows, dim, false);
        } else if constexpr (R > 1) {
          distance::kernels::direct_block<R, K>(space, coordinates, out, 0, rows, dim, false);
        } else {
          distance::kernels::direct_flat<K>(space, coordinates, out, 0, rows, dim, false);
        }
      });
}

// The flat form's bound probe: every entry computed as direct_flat<K> computes it, none written
// (direct_flat<K, false>): its time against the form's and the fill's says whether the output's
// bytes or the work bounds the form, where no hardware counters can be read.
template <int K, class Space>
void distance_direct_compute(benchmark::State& state) {
  distance_form<Space>(
      state, "direct",
      [](const Space& space, const auto& coordinates, const auto& out, std::int64_t rows, int dim) {
        distance::kernels::direct_flat<K, false>(space, coordinates, out, 0, rows, dim, false);
      },
      false);
}

// symmetric with tiles of T (kernels::symmetric<T, Held>; Held: column points held in registers).
template <int T, class Space, bool Held = false>
void distance_symmetric_form(benchmark::State& state) {
  distance_form<Space>(state, "symmetric", [](const Space& space, const auto& coordinates, const auto& out,
                                              std::int64_t, int dim) {
    distance::kernels::symmetric<T, Held>(space, coordinates, out, dim, false);
  });
}

// tiled's block form (kernels::tiled_blocks<Held, Rows>: a team per tile of Rows rows x columns;
// Held: the tile's column points in the lanes' registers).
template <class Space, bool Held = false, int Rows = distance::kernels::kTileRows>
void distance_tiled_blocks(benchmark::State& state) {
  distance_form<Space>(state, "tiled", [](const Space& space, const auto& coordinates, const auto& out,
                                          std::int64_t rows, int dim) {
    distance::kernels::tiled_blocks<Held, Rows>(space, coordinates, out, 0, rows, dim, false);
  });
}

}  // namespace

MINIAPP_BENCHMARKS(register_distance_benchmarks) {
  for_each_tested_space([](auto tag) {
    using Space = typename decltype(tag)::type;
    const std::string s = space_name<Space>();
    benchmark::RegisterBenchmark(("fill/float32/" + s).c_str(), fill<float, Space>)
        ->Arg(1024)->Arg(4096)->UseManualTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("fill-flat/float32/" + s).c_str(), fill_flat<float, Space>)
        ->Arg(1024)->Arg(4096)->UseManualTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("fill-deep-copy/float32/" + s).c_str(), fill_deep_copy<float, Space>)
        ->Arg(1024)->Arg(4096)->UseManualTime()->Unit(benchmark::kMillisecond);
#if MINIAPP_HOST_STREAM_STORES
    if constexpr (is_host_space<Space>())
      benchmark::RegisterBenchmark(("fill-stream/float32/" + s).c_str(), fill_stream<Space>)
          ->Arg(4096)->UseManualTime()->Unit(benchmark::kMillisecond);
#endif
    if constexpr (!is_host_space<Space>()) {
      // several values per thread, and a View four times the 4096 one (256 MiB)
      benchmark::RegisterBenchmark(("fill-flat-k4/float32/" + s).c_str(), fill_flat<float, Space, 4>)
          ->Arg(1024)->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("fill-flat-k8/float32/" + s).c_str(), fill_flat<float, Space, 8>)
          ->Arg(1024)->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("fill-flat-k16/float32/" + s).c_str(), fill_flat<float, Space, 16>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      // the same values a thread in 16-byte stores
      benchmark::RegisterBenchmark(("fill-packs-k4/float32/" + s).c_str(), fill_packs<Space, 4>)
          ->Arg(1024)->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("fill-packs-k8/float32/" + s).c_str(), fill_packs<Space, 8>)
          ->Arg(1024)->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("fill-packs-k16/float32/" + s).c_str(), fill_packs<Space, 16>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
    }
    for (const VariantInfo& v : distance::DistanceWorkload::variants())
      if (v.unavailable_reason.empty())
        benchmark::RegisterBenchmark(("distance-" + v.name + "/float32/" + s).c_str(),
                                   [name = v.name](benchmark::State& st) { distance_matrix<float, Space>(st, name); })
          ->Arg(1024)->Arg(4096)->UseManualTime()->Unit(benchmark::kMillisecond);
    // The same without the square roots: what they cost, where a vector square root's throughput
    // rather than the writes bounds direct (docs/performance.md).
    benchmark::RegisterBenchmark(("distance-direct-squared/float32/" + s).c_str(),
                                 [](benchmark::State& st) { distance_matrix<float, Space>(st, "direct", true); })
        ->Arg(1024)->Arg(4096)->UseManualTime()->Unit(benchmark::kMillisecond);
    if constexpr (!is_host_space<Space>()) {
      // direct's forms on devices: the team form it ran before, the flat form with 1, 4, 8 and 16
      // (its default, kDirectPerThread) entries per thread, and blocks of R rows x K columns.
      benchmark::RegisterBenchmark(("distance-direct-team/float32/" + s).c_str(), distance_direct_form<0, Space>)
          ->Arg(1024)->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-direct-flat-k1/float32/" + s).c_str(), distance_direct_form<1, Space>)
          ->Arg(1024)->Arg(4096)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-direct-flat-k4/float32/" + s).c_str(), distance_direct_form<4, Space>)
          ->Arg(1024)->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-direct-flat-k8/float32/" + s).c_str(), distance_direct_form<8, Space>)
          ->Arg(1024)->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-direct-flat-k16/float32/" + s).c_str(), distance_direct_form<16, Space>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-direct-flat-k16-compute/float32/" + s).c_str(),
                                   distance_direct_compute<16, Space>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      // R rows and K columns a thread, each column point loaded once for R rows
      benchmark::RegisterBenchmark(("distance-direct-block-r2-k8/float32/" + s).c_str(),
                                   distance_direct_form<8, Space, 2>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-direct-block-r4-k4/float32/" + s).c_str(),
                                   distance_direct_form<4, Space, 4>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-direct-block-r4-k8/float32/" + s).c_str(),
                                   distance_direct_form<8, Space, 4>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      // the workload's block (4 rows x 8 columns) reading the points as given (no coordinate-major
      // copy: a launch fewer), and in 16-byte stores, with the points copied or as given
      benchmark::RegisterBenchmark(("distance-direct-block-r4-k8-given/float32/" + s).c_str(),
                                   distance_direct_form<8, Space, 4, false, Read::given>)
          ->Arg(1024)->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-direct-packs-r4-k8/float32/" + s).c_str(),
                                   distance_direct_form<8, Space, 4, true>)
          ->Arg(1024)->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-direct-packs-r4-k8-given/float32/" + s).c_str(),
                                   distance_direct_form<8, Space, 4, true, Read::given>)
          ->Arg(1024)->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-direct-packs-r4-k16/float32/" + s).c_str(),
                                   distance_direct_form<16, Space, 4, true>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      // tiled as a team per tile of 16 rows x 256 columns (the workload's: a team per 16 rows)
      benchmark::RegisterBenchmark(("distance-tiled-blocks/float32/" + s).c_str(), distance_tiled_blocks<Space>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      // the same with each lane's column points held in registers, 16 and 32 rows a team (two and
      // four rows a thread: direct's block form takes four)
      benchmark::RegisterBenchmark(("distance-tiled-blocks-held/float32/" + s).c_str(),
                                   distance_tiled_blocks<Space, true>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-tiled-blocks-held-r32/float32/" + s).c_str(),
                                   distance_tiled_blocks<Space, true, 32>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      // symmetric's tiles: the workload's 32 x 32 (padded in scratch since 2026-11-30) and 64 x 64
      benchmark::RegisterBenchmark(("distance-symmetric-t32/float32/" + s).c_str(), distance_symmetric_form<32, Space>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-symmetric-t64/float32/" + s).c_str(), distance_symmetric_form<64, Space>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      // tiles of 96 and 128: each write a longer run of a row (384 and 512 bytes in float32); 64
      // ran faster than 32 by more than its halved index arithmetic explains, where the runs
      // doubled to 256 bytes (docs/tuning-notes.md, "distance: symmetric on devices").
      // 128's tile (66 KB) outgrows the level-0 scratch Kokkos gives a team on CUDA (about 40
      // KB), so it lives in level 1 (global memory, through the caches)
      benchmark::RegisterBenchmark(("distance-symmetric-t96/float32/" + s).c_str(), distance_symmetric_form<96, Space>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("distance-symmetric-t128/float32/" + s).c_str(), distance_symmetric_form<128, Space>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
      // the tiles of 64 with each lane's column points held in registers down the tile's rows
      benchmark::RegisterBenchmark(("distance-symmetric-held-t64/float32/" + s).c_str(),
                                   distance_symmetric_form<64, Space, true>)
          ->Arg(4096)->Arg(8192)->UseManualTime()->Unit(benchmark::kMillisecond);
    }
  });
}

}  // namespace miniapp::bench
