#include "miniapp/workloads/solver/solver.hpp"

#include "miniapp/core/workload.hpp"
#include "miniapp/workloads/distance/params.hpp"

#include "miniapp/core/deck.hpp"
#include "miniapp/core/host_threads.hpp"
#include "kernel_helpers.hpp"
#include "solver_helpers.hpp"
#include "space_types.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace miniapp;
using miniapp::testing::policies_for;
using miniapp::testing::run_once;
using namespace miniapp::testing::solver_tests;

template <class Space>
class SolverTest : public ::testing::Test {};
TYPED_TEST_SUITE(SolverTest, miniapp::testing::SpaceTypes, miniapp::testing::SpaceNames);

namespace {

distance::Params distance_params() { return {}; }

}  // namespace

// A system whose first column is zero on the diagonal needs a row swap; x = (1, 2, 3).
TYPED_TEST(SolverTest, KnownSystemThatNeedsPivoting) {
  using Space = TypeParam;
  const double a[3][3] = {{0, 2, 1}, {1, 1, 1}, {4, 0, 3}};
  const double x_expected[3] = {1, 2, 3};
  for (const std::string& variant : runnable_variants()) {
    solver::Kernel<double, Space> k(params(2, 2), variant, 3);
    for (std::size_t s = 0; s < 2; ++s)
      for (int i = 0; i < 3; ++i) {
        double bi = 0;
        for (int j = 0; j < 3; ++j) {
          k.matrices().host(s, i, j) = a[i][j] * (s + 1);
          bi += a[i][j] * (s + 1) * x_expected[j];
        }
        k.rhs().host(s, i) = bi;
      }
    run_once(k);
    for (std::size_t s = 0; s < 2; ++s) {
      EXPECT_EQ(k.info().host(s), 0) << variant;
      for (int i = 0; i < 3; ++i) EXPECT_NEAR(k.solutions().host(s, i), x_expected[i], 1e-12) << variant << " x" << i;
    }
    EXPECT_TRUE(k.verify(std::nullopt).passed) << variant;
  }
}

TYPED_TEST(SolverTest, EveryVariantVerifiesUnderEveryPolicyAndTheyAgree) {
  using Space = TypeParam;
  const std::size_t n = 19;  // not a multiple of the block size
  for (const std::string& variant : runnable_variants()) {
    for (MirrorPolicy policy : policies_for<Space>()) {
      for (auto kind : {solver::MatrixKind::Random, solver::MatrixKind::DiagonallyDominant}) {
        solver::Kernel<double, Space> k(params(5, 4, kind), variant, n);
        const Measurement m = measure(k, Space(), solver_spec(policy));
        EXPECT_TRUE(m.verification.passed) << variant << " " << to_string(policy) << ": " << m.verification.detail;
        // Same inputs: every variant must find the same x, up to rounding.
        solver::Kernel<double, Space> reference(params(5, 4, kind), "batched-thread", n);
        measure(reference, Space(), solver_spec(MirrorPolicy::AllResident));
        for (std::size_t s = 0; s < 5; ++s)
          for (std::size_t i = 0; i < n; ++i)
            EXPECT_NEAR(k.solutions().host(s, i), reference.solutions().host(s, i),
                        1e-9 * (1 + std::abs(reference.solutions().host(s, i))))
                << variant << " system " << s << " x" << i;
      }
    }
  }
}

// The batched variants on orders 1 to 40 and on every order the random decks draw, float32 and
// float64, random and diagonally dominant: each must pass LAPACK's residual test.
TYPED_TEST(SolverTest, EveryBatchedVariantVerifiesOnEveryOrderTheDecksDraw) {
  using Space = TypeParam;
  std::vector<std::size_t> orders = {63, 64, 65, 127, 128, 129};
  for (std::size_t n = 1; n <= 40; ++n) orders.push_back(n);
  for (const std::string& variant : runnable_variants()) {
    if (variant == "dense-blocked") continue;
    for (const std::size_t n : orders) {
      if (variant == "batched-team" && n > solver::largest_team_system<double, Space>(1)) continue;
      for (auto kind : {solver::MatrixKind::Random, solver::MatrixKind::DiagonallyDominant}) {
        solver::Kernel<double, Space> k64(params(16, 64, kind), variant, n);
        const Measurement m64 = measure(k64, Space(), solver_spec(MirrorPolicy::AllResident));
        EXPECT_TRUE(m64.verification.passed) << variant << " float64 n " << n << ": " << m64.verification.detail;
        solver::Kernel<float, Space> k32(params(16, 64, kind), variant, n);
        const Measurement m32 = measure(k32, Space(), solver_spec(MirrorPolicy::AllResident));
        EXPECT_TRUE(m32.verification.passed) << variant << " float32 n " << n << ": " << m32.verification.detail;
      }
    }
  }
}

// batched-thread on a host space solves runs of consecutive systems on one work slice per thread
// (two slices per thread, every other one used), on a device none (device_lu.hpp); batches
// smaller than the slices take one per system there too. Every system of batches that end runs
// unevenly, or are smaller than the slices, verifies and equals batched-team's answer: on host
// spaces of host-compiler builds the two run one function on the same row layout (solve_on_rows),
// so exactly; elsewhere the team routine orders its sums differently, so to the difference two
// backward-stable solves of an order-12 random system may show (1.3e-12 against 0.0143 in one
// of 2.7 million on the H200).
// Devices keep systems in registers or scratch (no work slices); they get batches around 33 systems.
TYPED_TEST(SolverTest, BatchedThreadSolvesEverySystemOfEveryRun) {
  using Space = TypeParam;
  constexpr bool kHost = is_host_space<Space>();
  const std::size_t slices = kHost ? 2 * static_cast<std::size_t>(Space().concurrency()) : 33;
  const double tolerance = kHost && MINIAPP_HOST_SIMD ? 0 : kHost ? 1e-12 : 1e-9;
  for (const std::size_t systems : {std::size_t{1}, slices - 1, slices, slices + 1, 5 * slices + 3}) {
    SCOPED_TRACE(std::to_string(systems) + " systems");
    const std::size_t expected = !kHost ? 0 : systems > slices ? slices : systems;
    EXPECT_EQ(solver::thread_work_slices(Space(), systems), expected);
    solver::Kernel<double, Space> thread(params(systems), "batched-thread", 12);
    const Measurement m = measure(thread, Space(), solver_spec(MirrorPolicy::AllResident));
    EXPECT_TRUE(m.verification.passed) << m.verification.detail;
    solver::Kernel<double, Space> team(params(systems), "batched-team", 12);
    EXPECT_TRUE(measure(team, Space(), solver_spec(MirrorPolicy::AllResident)).verification.passed);
    for (std::size_t s = 0; s < systems; ++s)
      for (std::size_t i = 0; i < 12; ++i)
        EXPECT_NEAR(thread.solutions().host(s, i), team.solutions().host(s, i),
                    tolerance * (1 + std::abs(team.solutions().host(s, i))))
            << "system " << s << ", x" << i;
  }
}

namespace {

// batched-thread's GPU mappings (device_lu.hpp) called directly, whatever the space picks for n:
// systems of `kind` in the device's LayoutLeft, column `zero_column` of system 1 zeroed where it
// is given, solved by `solve(a, b, x, info)`; returns the verification and the info values.
template <class Scalar, class Space, class Solve>
std::pair<Verification, std::vector<int>> solve_mapped(const Solve& solve, const std::size_t systems,
                                                       const std::size_t n, const solver::MatrixKind kind,
                                                       const int zero_column = -1) {
  Kokkos::View<Scalar***, Kokkos::LayoutLeft, Space> a("a", systems, n, n);
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, Space> b("b", systems, n), x("x", systems, n);
  Kokkos::View<int*, Space> info("info", systems);
  auto ha = Kokkos::create_mirror_view(a);
  auto hb = Kokkos::create_mirror_view(b);
  solver::generate_on_host(kind, ha, hb, 77);
  if (zero_column >= 0)
    for (std::size_t i = 0; i < n; ++i) ha(1, i, zero_column) = 0;
  Kokkos::deep_copy(a, ha);
  Kokkos::deep_copy(b, hb);
  Kokkos::deep_copy(x, Scalar(-1));
  Kokkos::deep_copy(info, -7);
  solve(a, b, x, info);
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto hinfo = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  std::vector<int> infos(hinfo.data(), hinfo.data() + systems);
  return {solver::verify_systems<Scalar>(ha, hb, hx, hinfo, std::nullopt), infos};
}

// One mapping on orders `orders`: both precisions, random systems (which pivot) and diagonally
// dominant ones, 37 systems so a team of several ends part-empty; a zero pivot is named by its
// column and no other system is touched by it; singular systems are all reported.
template <class Space, class Solve>
void check_mapping(const Solve& solve, const std::vector<std::size_t>& orders) {
  using solver::MatrixKind;
  for (const std::size_t n : orders) {
    SCOPED_TRACE("n " + std::to_string(n));
    for (auto kind : {MatrixKind::Random, MatrixKind::DiagonallyDominant}) {
      const auto [v64, info64] = solve_mapped<double, Space>(solve, 37, n, kind);
      EXPECT_TRUE(v64.passed) << "float64: " << v64.detail;
      EXPECT_EQ(info64, std::vector<int>(37, 0));
      const auto [v32, info32] = solve_mapped<float, Space>(solve, 37, n, kind);
      EXPECT_TRUE(v32.passed) << "float32: " << v32.detail;
    }
    if (n < 3) continue;
    const auto [v, info] = solve_mapped<double, Space>(solve, 5, n, MatrixKind::Random, 2);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(info, (std::vector<int>{0, 3, 0, 0, 0}));
    const auto [singular, singular_info] = solve_mapped<double, Space>(solve, 3, n, MatrixKind::Singular);
    EXPECT_FALSE(singular.passed);
    for (const int i : singular_info) EXPECT_GT(i, 0);
  }
}

}  // namespace

// The GPU mappings on every space (on the host they run with one lane): every order each serves
// and some past its boundaries (lanes: one lane group of 16, of 32, and more columns than 32
// lanes, which loop).
TYPED_TEST(SolverTest, GpuMappingsOfBatchedThreadVerifyOnEveryOrderTheyServe) {
  using Space = TypeParam;
  std::vector<std::size_t> in_registers;  // every order the register form serves
  for (std::size_t n = 1; n <= solver::kRegisterOrderMax; ++n) in_registers.push_back(n);
  {
    SCOPED_TRACE("registers");
    check_mapping<Space>([](auto& a, auto& b, auto& x, auto& info) {
      solver::batched_thread_registers(Space(), a, b, x, info, static_cast<int>(a.extent(1)));
    }, in_registers);
  }
  SCOPED_TRACE("lanes");
  check_mapping<Space>([](auto& a, auto& b, auto& x, auto& info) { solver::batched_thread_lanes(Space(), a, b, x, info); },
                       {1, 7, 11, 15, 16, 31, 32, 33, 40, 70});
}

// The row mapping (row_lu.hpp, prepared for GPUs at order 32) on every space, with rows padded to
// 32 (a lane a row on a GPU, every row on the host's one lane): it verifies on the orders it pads
// and fills, names a zero pivot's column, reports singular systems, and refuses order 33 before
// anything runs.
TYPED_TEST(SolverTest, RowMappingOfBatchedThreadVerifiesUpToItsPadding) {
  using Space = TypeParam;
  const auto rows = [](auto& a, auto& b, auto& x, auto& info) { solver::batched_thread_rows<32>(Space(), a, b, x, info); };
  check_mapping<Space>(rows, {1, 2, 7, 17, 31, 32});
  Kokkos::View<double***, Kokkos::LayoutLeft, Space> a("a", 2, 33, 33);  // solve_mapped's layout
  Kokkos::View<double**, Kokkos::LayoutLeft, Space> b("b", 2, 33), x("x", 2, 33);
  Kokkos::View<int*, Space> info("info", 2);
  Kokkos::deep_copy(info, -7);
  EXPECT_THROW(rows(a, b, x, info), std::invalid_argument);
  const auto hinfo = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  EXPECT_EQ(hinfo(0), -7);
}

namespace {

// Two forms of a mapping (`first`, `second`: solve(a, b, x, info)) on the same systems in the
// workload's layout (A row-major per system), `systems` of them so the last team is part-empty,
// some singular: the same x bit for bit and the same info.
template <class Scalar, class Space, class First, class Second>
void expect_same_bits(const std::size_t n, const std::size_t systems, const First& first, const Second& second) {
  SCOPED_TRACE("order " + std::to_string(n) + ", " + std::to_string(systems) + " systems, " +
               (sizeof(Scalar) == 8 ? "float64" : "float32"));
  Kokkos::View<Scalar***, Kokkos::LayoutRight, Space> a("a", systems, n, n);
  Kokkos::View<Scalar**, Kokkos::LayoutRight, Space> b("b", systems, n), x1("x1", systems, n), x2("x2", systems, n);
  Kokkos::View<int*, Space> info1("info1", systems), info2("info2", systems);
  auto ha = Kokkos::create_mirror_view(a);
  auto hb = Kokkos::create_mirror_view(b);
  solver::generate_on_host(solver::MatrixKind::Random, ha, hb, 91);
  for (std::size_t s = 3; s < systems; s += 17)  // a zero column: its pivot is tiny
    for (std::size_t i = 0; i < n; ++i) ha(s, i, (s / 17) % n) = 0;
  Kokkos::deep_copy(a, ha);
  Kokkos::deep_copy(b, hb);
  first(a, b, x1, info1);
  second(a, b, x2, info2);
  const auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x1);
  const auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x2);
  const auto i1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info1);
  const auto i2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info2);
  int singular = 0;
  for (std::size_t s = 0; s < systems; ++s) {
    ASSERT_EQ(i1(s), i2(s)) << "system " << s;
    singular += i1(s) != 0;
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(std::memcmp(&h1(s, i), &h2(s, i), sizeof(Scalar)), 0)
          << "system " << s << ", x" << i << ": " << h1(s, i) << " against " << h2(s, i);
  }
  if (systems > 3) EXPECT_GT(singular, 0);
}

}  // namespace

// The lanes mapping with every system in a 32 x 33 block (device_lu.hpp's LanesMatrix<32>, the
// workload's on devices at order 32) on every space: it verifies on orders it pads (1, 7, 17, 31)
// and fills (32), gives the general form's bits where both hold the system, and refuses order 33
// before anything runs.
TYPED_TEST(SolverTest, LanesMappingInAFixedBlockVerifiesAndEqualsTheGeneralForm) {
  using Space = TypeParam;
  const auto in_block = [](auto& a, auto& b, auto& x, auto& info) {
    solver::batched_thread_lanes<32>(Space(), a, b, x, info);
  };
  const auto general = [](auto& a, auto& b, auto& x, auto& info) {
    solver::batched_thread_lanes(Space(), a, b, x, info);
  };
  {
    SCOPED_TRACE("lanes, 32-row block");
    check_mapping<Space>(in_block, {1, 7, 17, 31, 32});
  }
  for (const std::size_t n : {20, 32}) {
    expect_same_bits<double, Space>(n, 37, in_block, general);
    expect_same_bits<float, Space>(n, 37, in_block, general);
  }
  Kokkos::View<double***, Kokkos::LayoutLeft, Space> a("a", 2, 33, 33);  // solve_mapped's layout
  Kokkos::View<double**, Kokkos::LayoutLeft, Space> b("b", 2, 33), x("x", 2, 33);
  Kokkos::View<int*, Space> info("info", 2);
  Kokkos::deep_copy(info, -7);
  try {
    in_block(a, b, x, info);
    ADD_FAILURE() << "order 33 in a 32-row block was not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cannot hold order 33"), std::string::npos) << e.what();
  }
  const auto hinfo = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  EXPECT_EQ(hinfo(0), -7);  // refused before a launch
}

namespace {

// The column mapping with G groups of T threads to a team, orders padded to NM, where the space's
// teams hold T * G threads (on a GPU it runs T = NM, G = 32 / NM); returns whether it ran.
template <int NM, int T, int G, class Space>
bool check_column_shape(const std::vector<std::size_t>& orders) {
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  if (Kokkos::TeamPolicy<Space>(Space(), 1, Kokkos::AUTO)
          .team_size_max(KOKKOS_LAMBDA(const Member&){}, Kokkos::ParallelForTag()) < T * G)
    return false;
  SCOPED_TRACE("columns padded to " + std::to_string(NM) + ", " + std::to_string(G) + " groups of " +
               std::to_string(T) + " threads");
  check_mapping<Space>([](auto& a, auto& b, auto& x, auto& info) {
    solver::batched_thread_columns<NM, T, G>(Space(), a, b, x, info);
  }, orders);
  return true;
}

}  // namespace

// The column mapping (GPUs: orders kRegisterOrderMax + 1 to kColumnOrderMax) on every space: on
// host spaces with one thread per system and, where the space's teams hold them, two threads a
// system (a thread holding every other column) and two systems a team; the GPU's shape wherever
// a team holds 32 threads (rows padded to 16, two systems a team, the workload's; and to 8, four
// systems a team, benchmarked against the register form); orders below, at and past the boundary
// of the padding (the workload pads 11-16 to 16) and a wider padding on the host. An order above
// the padding is refused before anything runs.
TYPED_TEST(SolverTest, ColumnMappingOfBatchedThreadVerifiesOnEveryOrderItServes) {
  using Space = TypeParam;
  const std::vector<std::size_t> to16 = {1, 2, 11, 15, 16};
  int ran = 0;
  if constexpr (is_host_space<Space>()) {  // a GPU thread would hold 8 to 32 columns: not compiled for GPUs
    ran += check_column_shape<16, 1, 1, Space>(to16);
    ran += check_column_shape<32, 1, 1, Space>({3, 17, 31, 32});
    ran += check_column_shape<16, 2, 1, Space>(to16);
    ran += check_column_shape<16, 1, 2, Space>(to16);
    ran += check_column_shape<8, 1, 1, Space>({1, 7, 8});
  }
  ran += check_column_shape<16, 16, 2, Space>(to16);  // the GPU's shape
  ran += check_column_shape<8, 8, 4, Space>({1, 2, 7, 8});  // padded to 8 on a GPU (benchmarks only)
  EXPECT_GE(ran, is_host_space<Space>() ? 3 : 2);  // host: one thread a system, every padding
  Kokkos::View<double***, Space> a("a", 1, 17, 17);
  Kokkos::View<double**, Space> b("b", 1, 17), x("x", 1, 17);
  Kokkos::View<int*, Space> info("info", 1);
  try {
    solver::batched_thread_columns<16, 1, 1>(Space(), a, b, x, info);
    FAIL() << "order 17 ran padded to 16";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "solver: the column mapping pads rows to 16, fewer than the order 17");
  }
}

// With Kokkos Kernels 4.5.1 the variant once called SerialGesv, which pivots statically, and
// refined its answer: system 657 of this float32 batch at order 129 (seed 77) still failed with a
// scaled residual of 1894, like about one system in a thousand at n >= 127. Partial pivoting
// passes every system of it, well inside the bound.
TYPED_TEST(SolverTest, KokkosKernelsVariantPassesTheSystemStaticPivotingFailed) {
  using Space = TypeParam;
  MINIAPP_SKIP_IF_UNAVAILABLE("solver", "batched-kokkos-kernels");
  solver::Kernel<float, Space> k(params(658), "batched-kokkos-kernels", 129);
  const Measurement m = measure(k, Space(), solver_spec(MirrorPolicy::AllResident));
  EXPECT_TRUE(m.verification.passed) << m.verification.detail;
  EXPECT_LT(m.verification.max_rel_error, 1.0) << m.verification.detail;  // the largest scaled residual
}

// A zero row is singular whatever the pivoting; every variant says so without producing inf or NaN.
TYPED_TEST(SolverTest, ZeroRowIsReportedSingularByEveryVariant) {
  using Space = TypeParam;
  for (const std::string& variant : runnable_variants()) {
    solver::Kernel<double, Space> k(params(3, 4), variant, 10);
    k.generate_inputs(9);
    for (int j = 0; j < 10; ++j) k.matrices().host(1, 6, j) = 0;
    run_once(k);
    EXPECT_NE(k.info().host(1), 0) << variant;
    EXPECT_EQ(k.info().host(0), 0) << variant;
    EXPECT_EQ(k.info().host(2), 0) << variant;
    for (int i = 0; i < 10; ++i) EXPECT_TRUE(std::isfinite(k.solutions().host(1, i))) << variant;
    const Verification v = k.verify(std::nullopt);
    EXPECT_FALSE(v.passed) << variant;
    EXPECT_NE(v.detail.find("system 1 is singular"), std::string::npos) << variant << ": " << v.detail;
    EXPECT_NE(v.detail.find("1 singular"), std::string::npos) << variant << ": " << v.detail;
  }
}

TYPED_TEST(SolverTest, SinglePrecisionPasses) {
  using Space = TypeParam;
  for (const std::string& variant : runnable_variants()) {
    solver::Kernel<float, Space> k(params(3, 8), variant, 40);
    const Measurement m = measure(k, Space(), solver_spec(MirrorPolicy::InputsResident));
    EXPECT_TRUE(m.verification.passed) << variant << ": " << m.verification.detail;
  }
}

TYPED_TEST(SolverTest, SingularSystemIsReportedWithItsColumnNeverPassed) {
  using Space = TypeParam;
  for (const std::string& variant : runnable_variants()) {
    solver::Kernel<double, Space> k(params(4, 4), variant, 12);
    k.generate_inputs(5);
    // System 2: column 3 zero, so the elimination meets a zero pivot exactly there.
    for (int i = 0; i < 12; ++i) k.matrices().host(2, i, 3) = 0;
    run_once(k);
    EXPECT_EQ(k.info().host(2), 4) << variant;
    for (std::size_t s : {0, 1, 3}) EXPECT_EQ(k.info().host(s), 0) << variant << " system " << s;
    for (int i = 0; i < 12; ++i) EXPECT_TRUE(std::isfinite(k.solutions().host(2, i))) << variant;
    const Verification v = k.verify(std::nullopt);
    EXPECT_FALSE(v.passed) << variant;
    EXPECT_NE(v.detail.find("system 2 is singular: zero pivot in column 3"), std::string::npos) << v.detail;
  }
}

TYPED_TEST(SolverTest, SingularGeneratorFailsEverySystem) {
  using Space = TypeParam;
  for (const std::string& variant : runnable_variants()) {
    solver::Kernel<double, Space> k(params(3, 4, solver::MatrixKind::Singular), variant, 10);
    const Measurement m = measure(k, Space(), solver_spec(MirrorPolicy::AllResident));
    EXPECT_FALSE(m.verification.passed) << variant;
    EXPECT_NE(m.verification.detail.find("3 singular"), std::string::npos) << m.verification.detail;
    EXPECT_NE(m.verification.detail.find("system 0 is singular"), std::string::npos) << m.verification.detail;
  }
}

TYPED_TEST(SolverTest, CorruptedSolutionFailsAndNamesTheSystem) {
  using Space = TypeParam;
  solver::Kernel<double, Space> k(params(4), "batched-thread", 16);
  k.generate_inputs(3);
  run_once(k);
  ASSERT_TRUE(k.verify(std::nullopt).passed);
  k.solutions().host(3, 7) += 1e-6;
  const Verification v = k.verify(std::nullopt);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("system 3: scaled residual"), std::string::npos) << v.detail;
  EXPECT_NE(v.detail.find("largest in row"), std::string::npos) << v.detail;
}

// A singular but consistent system (b = A * ones) whose x has a tiny residual: only the host
// reference LU can tell the kernel should have flagged it.
TYPED_TEST(SolverTest, UnflaggedSingularSystemIsCaughtByTheHostReference) {
  using Space = TypeParam;
  const std::size_t n = 6;
  solver::Kernel<double, Space> k(params(1, 4, solver::MatrixKind::Singular), "batched-thread", n);
  k.generate_inputs(1);
  for (std::size_t i = 0; i < n; ++i) {
    double row_sum = 0;
    for (std::size_t j = 0; j < n; ++j) row_sum += k.matrices().host(0, i, j);
    k.rhs().host(0, i) = row_sum;
    k.solutions().host(0, i) = 1.0;
  }
  k.info().host(0) = 0;  // as if the kernel had missed the zero pivot
  const Verification v = k.verify(std::nullopt);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("host reference LU"), std::string::npos) << v.detail;
}

TYPED_TEST(SolverTest, InputsGeneratedOnTheDeviceEqualHostGeneratedOnes) {
  using Space = TypeParam;
  solver::Kernel<float, Space> on_host(params(3), "batched-team", 7), on_device(params(3), "batched-team", 7);
  MeasurementSpec spec = solver_spec(MirrorPolicy::InputsResident);
  measure(on_host, Space(), spec);
  spec.generate = Generation::Device;
  const Measurement md = measure(on_device, Space(), spec);
  EXPECT_TRUE(md.verification.passed) << md.verification.detail;
  for (std::size_t s = 0; s < 3; ++s)
    for (std::size_t i = 0; i < 7; ++i) {
      ASSERT_EQ(on_host.rhs().host(s, i), on_device.rhs().host(s, i));
      for (std::size_t j = 0; j < 7; ++j) ASSERT_EQ(on_host.matrices().host(s, i, j), on_device.matrices().host(s, i, j));
    }
}

TYPED_TEST(SolverTest, ComputeLeavesInputsUnchanged) {
  using Space = TypeParam;
  for (const std::string& variant : runnable_variants()) {
    solver::Kernel<double, Space> k(params(2), variant, 9);
    k.generate_inputs(11);
    const auto a0 = Kokkos::create_mirror(k.matrices().host);
    const auto b0 = Kokkos::create_mirror(k.rhs().host);
    Kokkos::deep_copy(a0, k.matrices().host);
    Kokkos::deep_copy(b0, k.rhs().host);
    run_once(k);
    run_once(k);
    for (Transferable* f : k.inputs()) f->copy_to_host();
    for (std::size_t s = 0; s < 2; ++s)
      for (std::size_t i = 0; i < 9; ++i) {
        for (std::size_t j = 0; j < 9; ++j) ASSERT_EQ(k.matrices().host(s, i, j), a0(s, i, j)) << variant;
        ASSERT_EQ(k.rhs().host(s, i), b0(s, i)) << variant << " b" << i;
      }
    EXPECT_TRUE(k.verify(std::nullopt).passed) << variant;
  }
}

TYPED_TEST(SolverTest, TeamVariantRefusesSystemsBeyondTheScratchLimitNamingIt) {
  using Space = TypeParam;
  const std::size_t too_large = solver::largest_team_system<double, Space>(1) + 1;
  try {
    solver::Kernel<double, Space> k(params(1), "batched-team", too_large);
    FAIL() << "no error for n = " << too_large;
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("team scratch"), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(solver::team_scratch_limit<Space>(1))), std::string::npos) << what;
  }
}

TYPED_TEST(SolverTest, WorkEstimate) {
  solver::Kernel<double, TypeParam> k(params(3), "batched-thread", 10);
  const WorkEstimate w = k.work();
  EXPECT_DOUBLE_EQ(w.flops, 3 * (2.0 / 3.0 * 1000 + 2 * 100));
  EXPECT_DOUBLE_EQ(w.bytes_read, 3.0 * (100 + 10) * sizeof(double));
  EXPECT_DOUBLE_EQ(w.bytes_written, 3.0 * 10 * sizeof(double));
}

TEST(SolverDeck, KeysParsedAndBadValuesRejected) {
  const DeckResult ok = load_deck_text(
      "cases:\n  - workload: solver\n    sizes: 8\n    systems: 100\n    matrix: diagonally-dominant\n"
      "    block_size: 32\n",
      "ok.yaml", {});
  ASSERT_TRUE(ok.deck.has_value());
  const auto& p = std::any_cast<const solver::Params&>(ok.deck->cases[0].params);
  EXPECT_EQ(p.systems, 100u);
  EXPECT_EQ(p.matrix, solver::MatrixKind::DiagonallyDominant);
  EXPECT_EQ(p.block_size, 32);
  for (const char* bad : {"    systems: 0\n", "    matrix: hilbert\n", "    block_size: -1\n"}) {
    const DeckResult r =
        load_deck_text(std::string("cases:\n  - workload: solver\n    sizes: 8\n") + bad, "bad.yaml", {});
    EXPECT_FALSE(r.deck.has_value()) << bad;
  }
}

TEST(SolverDeck, KokkosKernelsVariantIsRefusedWhereUnavailable) {
  const DeckResult r = load_deck_text(
      "cases:\n  - workload: solver\n    variant: batched-kokkos-kernels\n    sizes: 8\n", "kk.yaml", {});
  EXPECT_EQ(r.deck.has_value(), compat::kHasBatchedPivotingSolve);
  if (!compat::kHasBatchedPivotingSolve) {
    ASSERT_FALSE(r.diagnostics.all().empty());
    EXPECT_NE(r.diagnostics.all().front().message.find("unavailable in this build"), std::string::npos);
  }
}

namespace {
// A float64 solver measurement of `variant` on Space, as the refusal checks see it.
template <class Space>
MeasurementSpec float64_spec(const std::string& variant) {
  MeasurementSpec spec;
  spec.workload = "solver";
  spec.space = space_name<Space>();
  spec.precision = Precision::Float64;
  spec.variant = variant;
  return spec;
}
}  // namespace

// batched-thread on a device keeps each system above the registers' orders in one thread's
// scratch, bounded per team: refused before the run where it cannot fit. Host spaces keep their
// systems in work slices of host memory, so no order is refused there for scratch.
TYPED_TEST(SolverTest, ThreadScratchLimitIsKnownBeforeTheRun) {
  using Space = TypeParam;
  const Workload* w = find_workload("solver");
  ASSERT_NE(w, nullptr);
  MeasurementSpec spec = float64_spec<Space>("batched-thread");
  const std::any p = params(1);
  if constexpr (is_host_space<Space>()) {
    spec.size = 4096;
    EXPECT_FALSE(w->refuse(spec, p).has_value());
  } else {
    const std::size_t largest = solver::largest_lanes_system<double, Space>();
    ASSERT_GT(largest, static_cast<std::size_t>(solver::kRegisterOrderMax));
    spec.size = largest + 1;
    const std::optional<std::string> why = w->refuse(spec, p);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("one thread's scratch"), std::string::npos) << *why;
    EXPECT_NE(why->find("n <= " + std::to_string(largest)), std::string::npos) << *why;
    spec.size = largest;
    EXPECT_FALSE(w->refuse(spec, p).has_value());
  }
}

// batched-team's scratch limit is known before anything is allocated: the registered workload
// refuses the measurement (main checks this in --dry-run and before the run) instead of the
// kernel's constructor stopping the run in the middle.
TYPED_TEST(SolverTest, TeamScratchLimitIsKnownBeforeTheRun) {
  using Space = TypeParam;
  const Workload* w = find_workload("solver");
  ASSERT_NE(w, nullptr);
  MeasurementSpec spec = float64_spec<Space>("batched-team");
  spec.size = solver::largest_team_system<double, Space>(1) + 1;
  const std::any p = params(1);
  const std::optional<std::string> why = w->refuse(spec, p);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("team scratch"), std::string::npos) << *why;
  EXPECT_NE(why->find(std::to_string(solver::team_scratch_limit<Space>(1))), std::string::npos) << *why;
  spec.size = solver::largest_team_system<double, Space>(1);
  EXPECT_FALSE(w->refuse(spec, p).has_value());
  spec.size = solver::largest_team_system<double, Space>(1) + 1;
  spec.variant = "dense-blocked";
  EXPECT_FALSE(w->refuse(spec, p).has_value());
  // Other workloads have no such limit.
  spec.workload = "distance";
  spec.variant = "direct";
  EXPECT_FALSE(find_workload("distance")->refuse(spec, std::any(distance_params())).has_value());
}

// The memory check counts verification's host allocations: the double copy of one system the
// reference LU factors (only where the reference LU runs, n^3 within its budget).
TEST(SolverFootprint, CountsTheReferenceCopyOnTheHostAndEachVariantsWork) {
  MeasurementSpec spec;
  spec.space = "serial";
  spec.precision = Precision::Float64;
  spec.size = 1000;
  spec.variant = "dense-blocked";
  solver::Params p;
  const Footprint small = solver::SolverWorkload::footprint(p, spec);
  EXPECT_EQ(small.host_only_bytes, (1000u * 1000u + 1000u) * sizeof(double));
  spec.size = 2000;  // beyond the reference LU's budget
  EXPECT_EQ(solver::SolverWorkload::footprint(p, spec).host_only_bytes, 0u);
  spec.size = 100;
  p.systems = 10;
  spec.variant = "batched-team";
  const Footprint team = solver::SolverWorkload::footprint(p, spec);
  spec.variant = "batched-thread";
  const Footprint thread = solver::SolverWorkload::footprint(p, spec);
  EXPECT_EQ(thread.space_bytes - team.space_bytes, 10u * (100u * 100u + 100u) * sizeof(double));
  // On a device batched-thread keeps each system in registers or scratch: no work View.
  EXPECT_EQ(solver::SolverWorkload::footprint_of(p, 100, sizeof(double), "batched-thread", false).space_bytes,
            team.space_bytes);
  spec.variant = "dense-vendor";  // one system's column-major copy, the scale and the pivots
  const Footprint vendor = solver::SolverWorkload::footprint(p, spec);
  EXPECT_EQ(vendor.space_bytes - team.space_bytes, (100u * 100u + 1u) * sizeof(double) + 102u * sizeof(int));
}

// A large dense solve notices SIGTERM between its panels, within a second of work, instead of
// after the whole solve (minutes for a large n).
TYPED_TEST(SolverTest, DenseSolveStopsPromptlyOnSigterm) {
  using Space = TypeParam;
  MINIAPP_SKIP_IF_UNAVAILABLE("solver", "dense-blocked");
  auto solve_until_signalled = [] {
    solver::Kernel<float, Space> k(params(16, 64), "dense-blocked", 1024);
    k.generate_inputs(3);
    miniapp::testing::exit_with_interruption_midway([&] { run_once(k); });
  };
  miniapp::testing::use_fresh_processes_for_death_tests();
  EXPECT_EXIT(solve_until_signalled(), ::testing::ExitedWithCode(0), "");
}

// A vendor library call on Serial runs on one thread, on OpenMP on the space's threads, and the
// caller's OpenMP thread count is restored afterwards.
TEST(HostThreads, VendorCallsRunOnTheSpacesThreadsAndRestoreTheCount) {
#if defined(_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
  const int before = omp_get_max_threads();
  {
    HostThreads serial(vendor_threads<Kokkos::Serial>());
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), before);
#if defined(KOKKOS_ENABLE_OPENMP)
  {
    HostThreads openmp(vendor_threads<Kokkos::OpenMP>());
    EXPECT_EQ(omp_get_max_threads(), Kokkos::OpenMP().concurrency());
  }
  EXPECT_EQ(omp_get_max_threads(), before);
#endif
#else
  GTEST_SKIP() << "this build has no OpenMP or no Serial space: no vendor thread count to set";
#endif
}
