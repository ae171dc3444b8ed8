// Solver variants against LAPACK getrf + getrs in the same run: dense-blocked and dense-vendor on
// one 2048 x 2048 float64 system, the batched variants on 100000 x 8 x 8 and 10000 x 32 x 32
// against a loop calling LAPACK per system on the same threads. The ratio is solver time / LAPACK time.

#include "miniapp/workloads/solver/solver.hpp"

#include "miniapp/core/host_threads.hpp"
#include "registry.hpp"
#include "timing.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <vector>

namespace miniapp::bench {

namespace {

solver::Params batch(std::size_t systems, int block_size = 128) {
  solver::Params p;
  p.systems = systems;
  p.block_size = block_size;
  return p;
}

// The kernel's inputs generated (seed 42) and copied to its space.
template <class Kernel>
void make_resident(Kernel& k) {
  k.generate_inputs(42);
  for (Transferable* f : k.inputs()) f->copy_to_device();
}

// The rate counters, then the outputs back and verified like the workload's result.
template <class Kernel>
void report_and_verify(benchmark::State& state, Kernel& k) {
  rate_counters(state, k.work());
  for (Transferable* f : k.outputs()) f->copy_to_host();
  if (!k.verify(std::nullopt).passed) state.SkipWithError("verification failed");
}

// dense-blocked with T threads to a panel leaf's team on devices (blocked::Work::panel_threads;
// the workload's is kPanelThreads), the leaves of WideRows rows or more over the whole device
// (Work::wide_leaf_rows; the workload's is kWideLeafRows) and those of ResidentRows or more
// resident (Work::resident_leaf_rows; the workload's is kResidentLeafRows) in teams of TeamRows
// rows (Work::resident_team_rows), block size 128, verified like the workload's result. Counter
// `solved_again`: systems solved again because a resident leaf's teams were not all running (0
// unless the device is shared).
template <int T, int WideRows, class Space, int ResidentRows = solver::blocked::kResidentLeafRows,
          int TeamRows = solver::blocked::kResidentTeamRows>
void dense_blocked_leaves(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  solver::Kernel<double, Space> k(batch(1, 128), "dense-blocked", n);
  make_resident(k);
  solver::blocked::Work<double, Space> w(n);
  w.info = k.info().device;
  w.panel_threads = T;
  w.wide_leaf_rows = WideRows;
  w.resident_leaf_rows = ResidentRows;
  w.resident_team_rows = TeamRows;
  // A barrier given up after 2^16 spins (tens of milliseconds; a working one waits microseconds):
  // on a device whose teams are not all running, the workload's limit (seconds a solve) would
  // take the solver step past its time limit, losing every solver benchmark of the sitting.
  w.resident_spin_limit = std::min<std::int64_t>(w.resident_spin_limit, std::int64_t(1) << 16);
  const Space space;
  std::int64_t step = 0;
  time_iterations(state, space, [&] {
    solver::blocked::solve_system(space, w, k.matrices().device, k.rhs().device, k.solutions().device, 128, step);
  });
  state.counters["solved_again"] = w.resident_fallbacks;
  report_and_verify(state, k);
}

template <class Space>
void solver_variant(benchmark::State& state, const std::string& variant) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto systems = static_cast<std::size_t>(state.range(1));
  const int block_size = state.range(2) > 0 ? static_cast<int>(state.range(2)) : 128;
  solver::Kernel<double, Space> k(batch(systems, block_size), variant, n);
  make_resident(k);
  const Space space;
  time_iterations(state, space, [&] { k.compute(space); });
  report_and_verify(state, k);
}

// One kernel of `variant` on the benchmark's systems (range 0: n, range 1: how many), its inputs
// resident; `solve(space, a, b, x, info)` on its Views is timed and the result verified like the
// workload's. A launch Kokkos refuses (too many threads to a team for the kernel's registers,
// say) is reported as the benchmark's error, named by `what`.
template <class Space, class Solve>
void batched_on_views(benchmark::State& state, const char* variant, const std::string& what, const Solve& solve) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto systems = static_cast<std::size_t>(state.range(1));
  solver::Kernel<double, Space> k(batch(systems), variant, n);
  make_resident(k);
  const auto a = k.matrices().device;
  const auto b = k.rhs().device;
  const auto x = k.solutions().device;
  const auto info = k.info().device;
  const Space space;
  try {
    solve(space, a, b, x, info);
    space.fence();
  } catch (const std::exception& e) {
    state.SkipWithError((what + " refused: " + e.what()).c_str());
    return;
  }
  time_iterations(state, space, [&] { solve(space, a, b, x, info); });
  report_and_verify(state, k);
}

// batched-team with T threads to a team (T = -1: Kokkos::AUTO) instead of the workload's choice
// (device spaces).
template <int T, class Space>
void batched_team_threads(benchmark::State& state) {
  batched_on_views<Space>(state, "batched-team", (T > 0 ? std::to_string(T) : "AUTO") + " threads to a team",
                          [](const Space& space, const auto& a, const auto& b, const auto& x, const auto& info) {
                            solver::batched_team<T>(space, a, b, x, info);
                          });
}

// batched-thread's register form as the workload runs it, each thread loading its own system
// (orders up to kRegisterOrderMax).
template <class Space>
void batched_thread_in_registers(benchmark::State& state) {
  batched_on_views<Space>(state, "batched-thread", "the register form",
                          [](const Space& space, const auto& a, const auto& b, const auto& x, const auto& info) {
                            solver::batched_thread_registers(space, a, b, x, info, static_cast<int>(a.extent(1)));
                          });
}

// The register form's bound probe (orders up to kRegisterOrderMax): each thread solves a system
// of order N made in its registers (a diagonally dominant A plus a value of the system's index, so
// nothing folds and the pivots are where partial pivoting finds them), with the form's own
// solve_registers and no View read or written; a thread writes the sum of its x only where it is
// -(systems), which these solutions never give. Its time against the form's says whether the
// elimination's instructions or the bytes bound it, where no hardware counters can be read.
template <int N, class Space, class Sink, MINIAPP_KERNEL_UNIT>
void registers_compute(const Space& space, const std::int64_t systems, const Sink& sink) {
  const double tiny_factor = solver::tiny_pivot_factor<double>(N), never = -static_cast<double>(systems);
  Kokkos::parallel_for(
      "bench::batched-registers-compute", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, systems),
      KOKKOS_LAMBDA(const std::int64_t s) {
        const double d = static_cast<double>(s & 255) * (1.0 / 1024);
        double sum = 0;
        const int info = solver::solve_registers<N>(
            [&](const int i, const int j) { return (i == j ? double(N + 1) : double((i * 3 + j * 5) % 7 - 3) * 0.1) + d; },
            [&](const int i) { return double(i + 1) + d; }, [&](const int, const double v) { sum += v; }, tiny_factor);
        if (sum == never || info < 0) sink(0) = sum;
      });
}

template <class Space>
void batched_thread_registers_compute(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  const auto systems = static_cast<std::int64_t>(state.range(1));
  Kokkos::View<double*, typename Space::memory_space> sink("sink", 1);
  const Space space;
  time_iterations(state, space, [&] {
    solver::with_register_order(n, [&](auto order) { registers_compute<decltype(order)::value>(space, systems, sink); });
  });
  state.SetLabel("bound probe: systems made in registers, no View read or written");
}

// batched-thread's lanes mapping (Lanes; each system held as LanesMatrix<Rows> holds it) or column
// mapping, whatever the workload picks for n (devices: columns up to kColumnOrderMax), or with
// Rows > 0 the column mapping with rows padded to Rows, a thread a column, 32 / Rows systems a
// warp (batched_thread_columns<Rows, Rows, 32 / Rows>).
template <bool Lanes, class Space, int Rows = 0>
void batched_thread_mapping(benchmark::State& state) {
  batched_on_views<Space>(state, "batched-thread", Lanes ? "the lanes mapping" : "the column mapping",
                          [](const Space& space, const auto& a, const auto& b, const auto& x, const auto& info) {
                            if constexpr (Lanes) {
                              solver::batched_thread_lanes<Rows>(space, a, b, x, info);
                            } else if constexpr (Rows > 0) {
                              solver::batched_thread_columns<Rows, Rows, 32 / Rows>(space, a, b, x, info);
                            } else {
                              solver::batched_thread_columns(space, a, b, x, info);
                            }
                          });
}

// batched-thread's row mapping (row_lu.hpp): rows padded to NM, a lane a row, 32 / NM systems a
// warp.
template <int NM, class Space>
void batched_thread_row_mapping(benchmark::State& state) {
  batched_on_views<Space>(state, "batched-thread", "the row mapping",
                          [](const Space& space, const auto& a, const auto& b, const auto& x, const auto& info) {
                            solver::batched_thread_rows<NM>(space, a, b, x, info);
                          });
}

// The lanes mapping's bound probe: its own solve_on_lanes, launched as batched_thread_lanes
// launches it, on systems made from each entry's place (a 32-bit hash, uniform in [0, 1) as the
// workload's inputs, so that partial pivoting swaps rows as often) instead of loads of A and b.
// Its scratch traffic and steps are the kernel's; only the global loads are gone, and x reaches
// memory only where a value is -(systems), which these solutions never give.
struct HashedEntries {
  static constexpr std::uint32_t kA = 0, kB = 0x9e3779b9u;  // the streams of A's and b's entries
  std::uint32_t n, stream;
  KOKKOS_INLINE_FUNCTION double operator()(const std::size_t s, const int i, const int j = 0) const {
    std::uint32_t h = ((static_cast<std::uint32_t>(s) * n + static_cast<std::uint32_t>(i)) * n +
                       static_cast<std::uint32_t>(j)) * 2654435761u + stream;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return static_cast<double>(h) * (1.0 / 4294967296.0);
  }
};

// `x(s, k) = v` and `info(s) = r` of solve_on_lanes, kept in registers: the value reaches the
// sink only where it equals `never`.
template <class T, class Sink>
struct StoreOnlyIf {
  Sink sink;
  T never;
  KOKKOS_INLINE_FUNCTION const StoreOnlyIf& operator()(const std::size_t, const int = 0) const { return *this; }
  KOKKOS_INLINE_FUNCTION void operator=(const T v) const {
    if (v == never) sink(0) = static_cast<typename Sink::value_type>(v);
  }
};

// Systems of order n, made by HashedEntries, solved by the lanes mapping's own launch; x and info
// go where X and Info put them (StoreOnlyIf when timed, Views when checked).
template <class Space, class X, class Info>
void lanes_on_hashed(const Space& space, const int n, const std::int64_t systems, const X& x, const Info& info) {
  const auto order = static_cast<std::uint32_t>(n);
  solver::launch_on_lanes<double, 0>(space, "bench::batched-lanes-compute", n, static_cast<std::size_t>(systems),
                                     HashedEntries{order, HashedEntries::kA}, HashedEntries{order, HashedEntries::kB},
                                     x, info);
}

// The probe timed at range (n, systems). Checked first: the probe writing into Views gives, bit for
// bit, what batched_thread_lanes gives on Views holding the same hashed systems, and every system
// is solved (no pivot too small: the probe does every step); else the benchmark reports an error.
template <class Space>
void batched_thread_lanes_compute(benchmark::State& state) {
  using Memory = typename Space::memory_space;
  const auto n = static_cast<int>(state.range(0));
  const auto systems = static_cast<std::int64_t>(state.range(1));
  const Space space;
  {
    Kokkos::View<double***, Kokkos::LayoutRight, Memory> a("a", systems, n, n);
    Kokkos::View<double**, Kokkos::LayoutRight, Memory> b("b", systems, n), x("x", systems, n), probe_x("px", systems, n);
    Kokkos::View<int*, Memory> info("info", systems), probe_info("pinfo", systems);
    const auto order = static_cast<std::uint32_t>(n);
    const HashedEntries ha{order, HashedEntries::kA}, hb{order, HashedEntries::kB};
    Kokkos::parallel_for(
        "bench::hashed-systems", Kokkos::RangePolicy<Space>(space, 0, systems), KOKKOS_LAMBDA(const std::int64_t s) {
          for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) a(s, i, j) = ha(std::size_t(s), i, j);
            b(s, i) = hb(std::size_t(s), i);
          }
        });
    solver::batched_thread_lanes(space, a, b, x, info);
    lanes_on_hashed(space, n, systems, probe_x, probe_info);
    space.fence();
    const auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    const auto hpx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probe_x);
    const auto hinfo = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
    const auto hpinfo = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probe_info);
    for (std::int64_t s = 0; s < systems; ++s) {
      if (hinfo(s) != 0 || hpinfo(s) != 0) {
        state.SkipWithError(("bound probe: hashed system " + std::to_string(s) + " has a pivot too small").c_str());
        return;
      }
      for (int i = 0; i < n; ++i)
        if (!(hpx(s, i) == hx(s, i))) {
          state.SkipWithError(("bound probe: x(" + std::to_string(s) + ", " + std::to_string(i) +
                               ") differs from the lanes mapping's on the same system")
                                  .c_str());
          return;
        }
    }
  }
  Kokkos::View<double*, Memory> sink("sink", 1);
  Kokkos::View<int*, Memory> info_sink("info-sink", 1);
  const StoreOnlyIf<double, decltype(sink)> x{sink, -static_cast<double>(systems)};
  const StoreOnlyIf<int, decltype(info_sink)> info{info_sink, -1};
  time_iterations(state, space, [&] { lanes_on_hashed(space, n, systems, x, info); });
  state.SetLabel("bound probe: the lanes mapping on systems made in scratch from a hash, no View read or written");
}

#if MINIAPP_HAVE_HOST_LAPACK
// The same systems through LAPACK on data in its own layout: a row-major A is a column-major A^T,
// so getrf factors it as it lies and getrs('T') solves A x = b. One system: the copy getrf's
// in-place factorisation needs is made before the timer starts (nothing but getrf and getrs is
// timed), and LAPACK runs on the space's threads (HostThreads: Serial is one). Many systems:
// a loop on the space's threads, each copying its system into its own slot (as compute() copies
// into its work Views) and calling the single-threaded LAPACK.
template <class Space>
void lapack_getrf_getrs(benchmark::State& state) {
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
  auto copy_in = [&](std::size_t s, std::size_t slot) {
    std::copy(a + s * n * n, a + (s + 1) * n * n, lu.begin() + static_cast<std::ptrdiff_t>(slot * n * n));
    std::copy(b + s * n, b + (s + 1) * n, x.begin() + static_cast<std::ptrdiff_t>(slot * n));
  };
  auto factor_solve = [&](std::size_t s, std::size_t slot) {
    double* m = lu.data() + slot * n * n;
    const char transpose = 'T';
    const int one = 1;
    int info = 0;
    dgetrf_(&order, &order, m, &order, pivots.data() + slot * n, &info);
    if (info == 0) dgetrs_(&transpose, &order, &one, m, &order, pivots.data() + slot * n, x.data() + slot * n, &order, &info, 1);
    failures[s] = info;
  };
  if (systems == 1) {
    HostThreads threads(vendor_threads<Space>());
    Kokkos::Timer timer;
    for (auto _ : state) {
      copy_in(0, 0);
      timer.reset();
      factor_solve(0, 0);
      state.SetIterationTime(timer.seconds());
    }
  } else {
    HostThreads threads(1);
    time_iterations(state, space, [&] {
      // Slots per thread: Kokkos host spaces number their threads 0..concurrency-1.
      Kokkos::parallel_for("bench::lapack-loop", Kokkos::RangePolicy<Space>(space, 0, systems), [&](const std::size_t s) {
        const auto slot = static_cast<std::size_t>(Space::impl_hardware_thread_id());
        copy_in(s, slot);
        factor_solve(s, slot);
      });
    });
  }
  rate_counters(state, k.work());
  for (int f : failures)
    if (f != 0) state.SkipWithError("LAPACK reported a singular system");
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
    // and on devices both at 4096 (the dense target: seed 001's 4096 deck)
    const auto at_4096 = [](auto* b) {
      if (!is_host_space<Space>()) b->Args({4096, 1, 128});
      b->UseManualTime()->Unit(benchmark::kMillisecond);
    };
    if (compat::kHasKokkosKernels)
      at_4096(benchmark::RegisterBenchmark(("solver-dense-blocked/float64/" + s).c_str(),
                                           [](benchmark::State& st) { solver_variant<Space>(st, "dense-blocked"); })
                  ->Args(dense)
                  ->Args({2048, 1, 64})
                  ->Args({2048, 1, 256}));
    if (solver::vendor::available<Space>())
      at_4096(benchmark::RegisterBenchmark(("solver-dense-vendor/float64/" + s).c_str(),
                                           [](benchmark::State& st) { solver_variant<Space>(st, "dense-vendor"); })
                  ->Args(dense));
    if constexpr (!is_host_space<Space>()) {
      if (compat::kHasKokkosKernels) {
        using solver::blocked::kPanelThreads;
        using solver::blocked::kWideLeafRows;
        constexpr int kNever = std::numeric_limits<int>::max();
        // one team of 64 or 256 threads per leaf (the workload's team: kPanelThreads)
        for (auto* b : {benchmark::RegisterBenchmark(("solver-dense-blocked-panel64/float64/" + s).c_str(),
                                                     dense_blocked_leaves<64, kWideLeafRows, Space>),
                        benchmark::RegisterBenchmark(("solver-dense-blocked-panel256/float64/" + s).c_str(),
                                                     dense_blocked_leaves<256, kWideLeafRows, Space>)})
          b->Args(dense)->UseManualTime()->Unit(benchmark::kMillisecond);
        // every leaf in one team, every leaf over the device, over the device from 512 or 1024
        // rows (the workload's: from kWideLeafRows, 2048), at 2048 and 4096
        for (auto* b : {benchmark::RegisterBenchmark(("solver-dense-blocked-leaf-one-team/float64/" + s).c_str(),
                                                     dense_blocked_leaves<kPanelThreads, kNever, Space>),
                        benchmark::RegisterBenchmark(("solver-dense-blocked-leaf-over-device/float64/" + s).c_str(),
                                                     dense_blocked_leaves<kPanelThreads, 0, Space>),
                        benchmark::RegisterBenchmark(("solver-dense-blocked-leaf-wide512/float64/" + s).c_str(),
                                                     dense_blocked_leaves<kPanelThreads, 512, Space>),
                        benchmark::RegisterBenchmark(("solver-dense-blocked-leaf-wide1024/float64/" + s).c_str(),
                                                     dense_blocked_leaves<kPanelThreads, 1024, Space>)})
          b->Args(dense)->Args({4096, 1, 128})->UseManualTime()->Unit(benchmark::kMillisecond);
        // leaves resident (one launch a leaf, a barrier a column): every leaf, or from 512 or
        // 2048 rows (the taller over the device, the rest in one team otherwise), at 2048 and 4096;
        // every leaf in teams of 64 or 128 rows (more teams at each barrier, a shorter pass each;
        // 256 rows the others, 512 beyond the level-0 scratch in float64)
        for (auto* b : {benchmark::RegisterBenchmark(("solver-dense-blocked-leaf-resident/float64/" + s).c_str(),
                                                     dense_blocked_leaves<kPanelThreads, kNever, Space, 0>),
                        benchmark::RegisterBenchmark(("solver-dense-blocked-leaf-resident-team64/float64/" + s).c_str(),
                                                     dense_blocked_leaves<kPanelThreads, kNever, Space, 0, 64>),
                        benchmark::RegisterBenchmark(("solver-dense-blocked-leaf-resident-team128/float64/" + s).c_str(),
                                                     dense_blocked_leaves<kPanelThreads, kNever, Space, 0, 128>),
                        benchmark::RegisterBenchmark(("solver-dense-blocked-leaf-resident512/float64/" + s).c_str(),
                                                     dense_blocked_leaves<kPanelThreads, kWideLeafRows, Space, 512>),
                        benchmark::RegisterBenchmark(("solver-dense-blocked-leaf-resident2048/float64/" + s).c_str(),
                                                     dense_blocked_leaves<kPanelThreads, kNever, Space, 2048>)})
          b->Args(dense)->Args({4096, 1, 128})->UseManualTime()->Unit(benchmark::kMillisecond);
      }
      const auto threads = [&](const std::string& name, void (*f)(benchmark::State&)) {
        auto* b = benchmark::RegisterBenchmark(("solver-batched-team-" + name + "/float64/" + s).c_str(), f);
        for (const auto& args : batched) b->Args(args);
        b->UseManualTime()->Unit(benchmark::kMillisecond);
      };
      // the workload's choice here is 32 / lanes threads (kBatchedTeamLanes; both batches fill
      // the device a warp per system): 4 at order 8, 1 at 32; 16 and 32 threads were slower at
      // both orders (docs/results/README.md)
      // batched-thread's two mappings above kRegisterOrderMax: the columns (the workload's up to
      // kColumnOrderMax, 16) against the lanes there, and the lanes at 32 (the workload's above),
      // also at 10^3 systems, fewer than an H200 holds at once (about 3200: six teams of four a
      // multiprocessor by their scratch): bound by each system's latency, 10^3 take about one
      // wave's time, a quarter of 10^4's four waves; bound by throughput, a tenth of 10^4's
      benchmark::RegisterBenchmark(("solver-batched-thread-lanes/float64/" + s).c_str(),
                                   batched_thread_mapping<true, Space>)
          ->Args({16, 10000})->Args({32, 10000})->Args({32, 1000})->UseManualTime()->Unit(benchmark::kMillisecond);
      // the lanes with every system in a 32 x 33 block (a row stride the compiler knows) at order 32
      benchmark::RegisterBenchmark(("solver-batched-thread-lanes-rows32/float64/" + s).c_str(),
                                   batched_thread_mapping<true, Space, 32>)
          ->Args({32, 10000})->Args({32, 1000})->UseManualTime()->Unit(benchmark::kMillisecond);
      // the row mapping (prepared: a system's rows in its lanes' registers, no barrier) at the
      // sizes of the mappings it would replace: rows padded to 32 against lanes-rows32, to 16
      // against the columns and the register form (order 10, 16), to 8 against the register form
      // and columns8 (60, 76 and 124 registers in float64, nvcc 13.0, sm_90)
      benchmark::RegisterBenchmark(("solver-batched-thread-rows32/float64/" + s).c_str(),
                                   batched_thread_row_mapping<32, Space>)
          ->Args({32, 10000})->Args({32, 1000})->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("solver-batched-thread-rows16/float64/" + s).c_str(),
                                   batched_thread_row_mapping<16, Space>)
          ->Args({16, 10000})->Args({10, 100000})->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("solver-batched-thread-rows8/float64/" + s).c_str(),
                                   batched_thread_row_mapping<8, Space>)
          ->Args({8, 100000})->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("solver-batched-thread-columns/float64/" + s).c_str(),
                                   batched_thread_mapping<false, Space>)
          ->Args({16, 10000})->Args({10, 100000})->UseManualTime()->Unit(benchmark::kMillisecond);
      // the register form's orders on the column mapping (prepared: the register form at order 8
      // takes 216 registers a thread in float64, 9 warps a multiprocessor, and stays short of its
      // bytes floor on a GPU): rows padded to 8, four systems a warp, a thread a
      // column; at order 10 the workload's padding to 16 (above)
      benchmark::RegisterBenchmark(("solver-batched-thread-columns8/float64/" + s).c_str(),
                                   batched_thread_mapping<false, Space, 8>)
          ->Args({8, 100000})->UseManualTime()->Unit(benchmark::kMillisecond);
      // the register form (the workload's up to kRegisterOrderMax) at order 8 and at seed 001's
      // order 10, beside its bound probe (staging its loads through scratch was slower on a GPU,
      // and was removed: docs/tuning-notes.md)
      benchmark::RegisterBenchmark(("solver-batched-thread-registers/float64/" + s).c_str(),
                                   batched_thread_in_registers<Space>)
          ->Args({8, 100000})->Args({10, 100000})->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("solver-batched-thread-registers-compute/float64/" + s).c_str(),
                                   batched_thread_registers_compute<Space>)
          ->Args({8, 100000})->Args({10, 100000})->UseManualTime()->Unit(benchmark::kMillisecond);
      threads("auto", batched_team_threads<-1, Space>);
      threads("t1", batched_team_threads<1, Space>);
      threads("t2", batched_team_threads<2, Space>);
      threads("t4", batched_team_threads<4, Space>);
      threads("t8", batched_team_threads<8, Space>);
    }
    // the lanes mapping's bound probe at the lanes benchmark's sizes: its work without the loads of
    // A and b (on host spaces too, where benchmark.smoke runs its check against the lanes mapping)
    benchmark::RegisterBenchmark(("solver-batched-thread-lanes-compute/float64/" + s).c_str(),
                                 batched_thread_lanes_compute<Space>)
        ->Args({16, 10000})->Args({32, 10000})->Args({32, 1000})->UseManualTime()->Unit(benchmark::kMillisecond);
#if MINIAPP_HAVE_HOST_LAPACK
    if constexpr (is_host_space<Space>()) {
      auto* b = benchmark::RegisterBenchmark(("lapack-getrf-getrs/float64/" + s).c_str(), lapack_getrf_getrs<Space>);
      for (const auto& args : batched) b->Args({args[0], args[1]});
      b->Args({dense[0], dense[1]})->UseManualTime()->Unit(benchmark::kMillisecond);
    }
#endif
  });
}

}  // namespace miniapp::bench
