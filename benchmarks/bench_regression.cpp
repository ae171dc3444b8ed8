// Gradient-descent steps against the bandwidth bound of reading X once: a plain Kokkos sum over
// the bytes of an N x (P+1) row-major View like the workload's X, measured in the same run
// (issue 6: `fused` within 1.25x of it at N = 10^6, P = 50 on OpenMP). Times are per gradient step.
#include "miniapp/workloads/regression/regression.hpp"

#include "registry.hpp"
#include "timing.hpp"

#include <benchmark/benchmark.h>

#include <cmath>
#include <string>

namespace miniapp::bench {

namespace {

// One streaming read of X: every element of the View's span added once. Host spaces: kChunk per
// call into lanes of independent partial sums (regression::Lanes, as the fused kernel's dot
// products), so it vectorises and runs at memory bandwidth in both precisions rather than at the
// latency of one chain of additions. Device spaces: four elements per thread, a quarter of the
// span apart, so that each of a warp's loads is contiguous (the host form gave each thread its own
// 1 KiB and read at a third of the probe's triad on the H200: no reference for a GPU kernel).
template <class Space, class Flat, class Sum>
void read_chunks(const Space& space, const Flat& flat, const Sum& sum) {
  using Scalar = typename Flat::non_const_value_type;
  constexpr int kWidth = regression::Lanes<Scalar>::kWidth;
  constexpr std::int64_t kChunk = 16 * kWidth;  // 1 KiB per call
  const auto total = static_cast<std::int64_t>(flat.span());
  Kokkos::parallel_reduce(
      "bench::stream_read", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, (total + kChunk - 1) / kChunk),
      KOKKOS_LAMBDA(const std::int64_t c, Scalar& s) {
        const Scalar* p = flat.data() + c * kChunk;
        const std::int64_t end = total - c * kChunk < kChunk ? total - c * kChunk : kChunk;
        regression::Lanes<Scalar> part;
        std::int64_t i = 0;
        for (; i + kWidth <= end; i += kWidth)
          for (int w = 0; w < kWidth; ++w) part.v[w] += p[i + w];
        for (int w = 0; i + w < end; ++w) part.v[w] += p[i + w];
        s += part.total();
      },
      sum);
}

template <class Space, class Flat, class Sum>
void read_coalesced(const Space& space, const Flat& flat, const Sum& sum) {
  using Scalar = typename Flat::non_const_value_type;
  const auto total = static_cast<std::int64_t>(flat.span());
  const std::int64_t q = (total + 3) / 4;
  Kokkos::parallel_reduce(
      "bench::stream_read_coalesced", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, q),
      KOKKOS_LAMBDA(const std::int64_t e, Scalar& s) {
        Scalar v[4];
        for (int k = 0; k < 4; ++k) v[k] = e + k * q < total ? flat(e + k * q) : Scalar(0);
        s += (v[0] + v[1]) + (v[2] + v[3]);
      },
      sum);
}

template <class Scalar, class Space>
void stream_read(benchmark::State& state) {
  using MemorySpace = typename Space::memory_space;
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto cols = static_cast<std::size_t>(state.range(1)) + 1;
  Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace> x("x", n, cols);
  Kokkos::deep_copy(x, Scalar(1));
  const Kokkos::View<const Scalar*, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> flat(
      x.data(), x.span());
  const auto total = static_cast<std::int64_t>(x.span());
  const Space space;
  Kokkos::View<Scalar, MemorySpace> sum("sum");
  time_iterations(state, space, [&] {
    if constexpr (is_host_space<Space>()) read_chunks(space, flat, sum);
    else read_coalesced(space, flat, sum);
  });
  // X is all ones: the sum counts the elements read, so a read skipped or doubled shows.
  Scalar got;
  Kokkos::deep_copy(got, sum);
  if (std::abs(static_cast<double>(got) - static_cast<double>(total)) > 1e-6 * static_cast<double>(total))
    state.SkipWithError("the stream read did not add every element of X once");
  rate_counters(state, {0, static_cast<double>(x.span() * sizeof(Scalar)), 0});
}

// One pass of the fused gradient sums in the two portable forms, same run: Lanes = 0,
// `regression-sums-rows`, FusedGradient (a thread per four rows: what fused_sums runs on host
// spaces where PackedGradient does not, and on devices for narrow rows), and on device spaces
// `regression-sums-lanes<L>`, TeamGradient with L lanes across a row (fused_sums:
// kTeamGradientLanes, 4 for float32 and 8 for float64; `-c1` one column per lane per step instead
// of kTeamGradientChunk), and `regression-sums-registers-lanes<L>`, its register form (what
// fused_sums runs on device spaces for rows of up to 64 columns), and at 2 columns (one feature)
// `regression-sums-rows` against `-narrow`, the register form on one lane (fused_sums' choice on
// devices for rows of 1 to 3 columns); `-registers-lanes4-unbounded` the workload's register form
// without its launch bounds (team_gradient_min_teams), `-rows2` with two rows a thread at once
// (TeamGradient's Rows), `-staged` with the team's rows through its scratch a tile at a time
// (TeamGradient's Staged). SumsData: X is all ones and
// beta 1 / cols, so every residual is 1 (to rounding) and the loss sum counts the rows read.
template <class Scalar, class MemorySpace>
struct SumsData {
  std::size_t n, cols;
  Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace> x;
  Kokkos::View<Scalar*, Kokkos::LayoutRight, MemorySpace> y, beta, sums;

  explicit SumsData(const benchmark::State& state)
      : n(static_cast<std::size_t>(state.range(0))),
        cols(static_cast<std::size_t>(state.range(1)) + 1),
        x("x", n, cols),
        y("y", n),
        beta("beta", cols),
        sums("sums", cols + 1) {
    Kokkos::deep_copy(x, Scalar(1));
    Kokkos::deep_copy(beta, Scalar(1) / static_cast<Scalar>(cols));
  }

  // After the timed passes: an error where the loss sum did not count every row once; the bytes
  // of X a pass reads.
  void finish(benchmark::State& state) const {
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums);
    if (std::abs(static_cast<double>(host(cols)) - static_cast<double>(n)) > 1e-3 * static_cast<double>(n))
      state.SkipWithError("the gradient sums did not see every row of X once");
    rate_counters(state, {0, static_cast<double>(x.span() * sizeof(Scalar)), 0});
  }
};

template <class Scalar, class Space, int Lanes, int Chunk = regression::kTeamGradientChunk, int RegisterColumns = 0,
          int MinTeams = -1, int Rows = 1, bool Staged = false>
void gradient_sums(benchmark::State& state) {
  using MemorySpace = typename Space::memory_space;
  const SumsData<Scalar, MemorySpace> d(state);
  const Space space;
  constexpr int kLanes = Lanes > 0 ? Lanes : 1;
  if (Lanes > 0 && !regression::team_gradient_fits<Scalar, Space, kLanes>(d.cols)) {
    state.SkipWithError("TeamGradient's scratch does not fit a team of this space");
    return;
  }
  Kokkos::View<Scalar*, MemorySpace> partials(
      "partials", Lanes > 0 ? regression::team_gradient_partials_size<Scalar, Space, kLanes>(d.n, d.cols) : 0);
  time_iterations(state, space, [&] {
    if constexpr (Lanes > 0)
      regression::team_gradient_sums<kLanes, Chunk, RegisterColumns, MinTeams, Rows, Staged>(space, d.x, d.y, d.beta,
                                                                                             partials, d.sums);
    else regression::range_gradient_sums(space, d.x, d.y, d.beta, d.sums);
  });
  d.finish(state);
}

#if MINIAPP_HOST_SIMD
// One pass of PackedGradient, the sums fused_sums runs on host spaces (`regression-sums-packed`),
// and the same with every row in blocks of a pack's width of rows (`-blocks`: MaxResidentPacks
// 0), which the default form takes only for rows wider than its resident packs, and `-lean`,
// only the sums held and two rows a step (HeldPacks 0). Same data and check as gradient_sums.
template <class Scalar, class Space, int MaxResidentPacks, int HeldPacks = regression::kPackedHeldPacks>
void packed_sums(benchmark::State& state) {
  using MemorySpace = typename Space::memory_space;
  const SumsData<Scalar, MemorySpace> d(state);
  const Space space;
  const regression::PackedGradient<Scalar, MemorySpace, MaxResidentPacks, HeldPacks> f{
      d.x, d.y, d.beta, static_cast<unsigned>(d.cols + 1)};
  time_iterations(state, space, [&] {
    Kokkos::parallel_reduce("bench::packed_sums",
                            Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, f.calls(d.n)), f,
                            d.sums);
  });
  d.finish(state);
}
#endif

// Gradient steps, range(2) of them per timed call (one unless given). One step per call for the
// large shapes (the start kernel that zeroes beta costs microseconds against milliseconds): with
// several steps per call and the manual time divided by their number, Google Benchmark's CPU
// column would stay per call, ~10x the wall time per step for 10 steps, an artifact of the
// division, not extra work. The small shape (the quickstart's 1000 samples) times a whole fit of
// 1000 steps, where the launches are the cost. `launches`: the steps as a reduction and an update
// launch each also where compute runs them in one parallel region (host spaces of several
// threads) or in one launch a step (device spaces: TeamGradientStep), to compare the two in one
// run (`regression-fused-launches`).
template <class Scalar, class Space>
void gradient_steps(benchmark::State& state, const std::string& variant, bool launches) {
  const auto n = static_cast<std::size_t>(state.range(0));
  regression::Params p;
  p.features = static_cast<int>(state.range(1));
  p.iterations = state.range(2);
  regression::Kernel<Scalar, Space> k(p, variant, n);
  const Space space;
  k.generate_inputs_on_device(space, 42);
  if (launches) time_iterations(state, space, [&] { k.compute_with_launches(space, false); });
  else time_iterations(state, space, [&] { k.compute(space); });
  rate_counters(state, k.work());
  state.counters["region_threads"] = launches ? 1 : k.region_threads();
}

template <class Scalar>
void register_for_precision(const std::string& precision) {
  for_each_tested_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    const std::string s = space_name<Space>();
    auto shapes = [](benchmark::internal::Benchmark* b) {
      return b->Args({1000000, 50, 1})->Args({1000000, 1, 1})->UseManualTime()->Unit(benchmark::kMillisecond);
    };
    shapes(benchmark::RegisterBenchmark(("regression-stream-read/" + precision + "/" + s).c_str(),
                                        stream_read<Scalar, Space>));
    const auto sums = [&](const std::string& form, void (*f)(benchmark::State&), std::int64_t features = 50) {
      benchmark::RegisterBenchmark(("regression-sums-" + form + "/" + precision + "/" + s).c_str(), f)
          ->Args({1000000, features})
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    };
    sums("rows", gradient_sums<Scalar, Space, 0>);
#if MINIAPP_HOST_SIMD
    if constexpr (is_host_space<Space>()) {
      sums("packed", packed_sums<Scalar, Space, regression::kPackedResidentPacks>);
      sums("packed-blocks", packed_sums<Scalar, Space, 0>);
      sums("packed-lean", packed_sums<Scalar, Space, regression::kPackedResidentPacks, 0>);
    }
#endif
    if constexpr (!is_host_space<Space>()) {
      // a row of 51 values: 4 lanes x 8 columns take it in two steps, the second one 19 columns
      // wide; 2 lanes and 16-column chunks are the shapes around fused_sums' choices
      sums("lanes2", gradient_sums<Scalar, Space, 2>);
      sums("lanes4", gradient_sums<Scalar, Space, 4>);
      sums("lanes4-c16", gradient_sums<Scalar, Space, 4, 16>);
      sums("lanes8", gradient_sums<Scalar, Space, 8>);
      sums("lanes8-c1", gradient_sums<Scalar, Space, 8, 1>);  // a column per step: the loop before chunks
      sums("lanes16", gradient_sums<Scalar, Space, 16>);
      sums("lanes32", gradient_sums<Scalar, Space, 32>);
      // the register form at 4, 8 and 16 lanes (16, 8 and 4 columns of the 64 a lane)
      constexpr int kChunk = regression::kTeamGradientChunk, kColumns = regression::kTeamGradientRegisterColumns;
      sums("registers-lanes4", gradient_sums<Scalar, Space, 4, kChunk, kColumns>);
      sums("registers-lanes8", gradient_sums<Scalar, Space, 8, kChunk, kColumns>);
      sums("registers-lanes16", gradient_sums<Scalar, Space, 16, kChunk, kColumns>);
      // the register form on 4 lanes with no launch bounds (float32's are 3 teams a multiprocessor:
      // team_gradient_min_teams; float64 has none, so there the two are one kernel), and float32's
      // with 4 teams (64 registers: ptxas spills 80 bytes; float64 would spill 472)
      sums("registers-lanes4-unbounded", gradient_sums<Scalar, Space, 4, kChunk, kColumns, 0>);
      if constexpr (sizeof(Scalar) == 4)
        sums("registers-lanes4-teams4", gradient_sums<Scalar, Space, 4, kChunk, kColumns, 4>);
      // two rows a thread at once (TeamGradient's Rows): on 4 lanes in float32 only (float64 would
      // hold 128 registers of values), on 8 lanes in both
      if constexpr (sizeof(Scalar) == 4)
        sums("registers-lanes4-rows2", gradient_sums<Scalar, Space, 4, kChunk, kColumns, -1, 2>);
      sums("registers-lanes8-rows2", gradient_sums<Scalar, Space, 8, kChunk, kColumns, -1, 2>);
      // the team's rows copied into its scratch a tile at a time, 16 bytes a load, each thread's
      // row read from there (TeamGradient's Staged), on the workload's 4 lanes and on 8. On 4 lanes
      // bounded to four teams a multiprocessor in float32 and two in float64 (ptxas, sm_90: 63
      // and 121 registers, no spills; float64 unbounded took 157 before the row was read from
      // scratch twice instead of held, one team); on 8 lanes unbounded (56 and 70 registers)
      constexpr int kStagedTeams = sizeof(Scalar) <= 4 ? 4 : 2;
      sums("registers-lanes4-staged", gradient_sums<Scalar, Space, 4, kChunk, kColumns, kStagedTeams, 1, true>);
      sums("registers-lanes8-staged", gradient_sums<Scalar, Space, 8, kChunk, kColumns, -1, 1, true>);
      // the single-variable model's rows of 2: FusedGradient against the narrow form
      sums("rows", gradient_sums<Scalar, Space, 0>, 1);
      sums("narrow", gradient_sums<Scalar, Space, 1, kChunk, regression::kTeamGradientNarrowColumns>, 1);
    }
    for (const VariantInfo& v : regression::RegressionWorkload::variants())
      if (v.unavailable_reason.empty())
        shapes(benchmark::RegisterBenchmark(
                   ("regression-" + v.name + "/" + precision + "/" + s).c_str(),
                   [name = v.name](benchmark::State& st) { gradient_steps<Scalar, Space>(st, name, false); }))
            ->Args({1000, 0, 1000});
    if (!is_host_space<Space>() || regression::fused_region_threads(Space()) > 1)
      shapes(benchmark::RegisterBenchmark(
                 ("regression-fused-launches/" + precision + "/" + s).c_str(),
                 [](benchmark::State& st) { gradient_steps<Scalar, Space>(st, "fused", true); }))
          ->Args({1000, 0, 1000});
  });
}

}  // namespace

MINIAPP_BENCHMARKS(register_regression_benchmarks) {
  register_for_precision<float>("float32");
  register_for_precision<double>("float64");
}

}  // namespace miniapp::bench
