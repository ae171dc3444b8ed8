#include "miniapp/workloads/solver/solver.hpp"

#include "miniapp/core/workload.hpp"
#include "kernel_helpers.hpp"
#include "solver_helpers.hpp"
#include "space_types.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>

// dense-blocked's factorisation in its forms (recursive panels, host and device forms, panel
// leaves in one team and over the device) and against dense-vendor; test_solver.cpp has the rest
// of the solver's tests. Apart so that the two compile side by side.

using namespace miniapp;
using namespace miniapp::testing::solver_tests;
using miniapp::testing::run_once;

template <class Space>
class SolverDenseTest : public ::testing::Test {};
TYPED_TEST_SUITE(SolverDenseTest, miniapp::testing::SpaceTypes, miniapp::testing::SpaceNames);

// Block sizes that exercise the recursive panel factorisation: panels wider than its leaves,
// halves that are not multiples of the leaf, a last panel narrower than the others, one panel
// wider than the whole matrix. Each must pass and find the x of the column-by-column factorisation.
TYPED_TEST(SolverDenseTest, DenseBlockedRecursivePanelsAgreeWithTheColumnByColumnFactorisation) {
  using Space = TypeParam;
  MINIAPP_SKIP_IF_UNAVAILABLE("solver", "dense-blocked");
  const std::size_t n = 150;
  solver::Kernel<double, Space> unblocked(params(2, 1), "dense-blocked", n);
  const Measurement reference = measure(unblocked, Space(), solver_spec(MirrorPolicy::AllResident));
  ASSERT_TRUE(reference.verification.passed) << reference.verification.detail;
  for (int block_size : {16, 48, 64, 100, 200}) {
    solver::Kernel<double, Space> k(params(2, block_size), "dense-blocked", n);
    const Measurement m = measure(k, Space(), solver_spec(MirrorPolicy::AllResident));
    EXPECT_TRUE(m.verification.passed) << "block_size " << block_size << ": " << m.verification.detail;
    for (std::size_t s = 0; s < 2; ++s)
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(k.solutions().host(s, i), unblocked.solutions().host(s, i),
                    1e-9 * (1 + std::abs(unblocked.solutions().host(s, i))))
            << "block_size " << block_size << " system " << s << " x" << i;
  }
}

// A zero pivot met inside a recursive sub-panel (the right half of the first panel, the first
// leaf of the narrow last panel, deep inside a panel wider than n) is reported at its column; the
// next system, solved after it with the same work Views, is unaffected.
TYPED_TEST(SolverDenseTest, DenseBlockedZeroPivotInsideARecursiveSubPanelIsReported) {
  using Space = TypeParam;
  MINIAPP_SKIP_IF_UNAVAILABLE("solver", "dense-blocked");
  const std::size_t n = 150;
  const std::pair<int, int> cases[] = {{64, 37}, {64, 130}, {200, 101}};
  for (const auto& [block_size, column] : cases) {
    solver::Kernel<double, Space> k(params(2, block_size), "dense-blocked", n);
    k.generate_inputs(5);
    for (std::size_t i = 0; i < n; ++i) k.matrices().host(0, i, column) = 0;
    run_once(k);
    EXPECT_EQ(k.info().host(0), column + 1) << "block_size " << block_size;
    EXPECT_EQ(k.info().host(1), 0) << "block_size " << block_size;
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(k.solutions().host(0, i), 0.0);
    const Verification v = k.verify(std::nullopt);
    EXPECT_FALSE(v.passed);
    EXPECT_NE(v.detail.find("system 0 is singular: zero pivot in column " + std::to_string(column)), std::string::npos)
        << v.detail;
    EXPECT_NE(v.detail.find("1 singular"), std::string::npos) << v.detail;
  }
}

// Orders one past a multiple of a panel or of a recursive half leave a trailing update of one
// column: C and B are then columns of the LayoutRight work matrix, which Kokkos Kernels >= 3.5
// once handed to gemv as contiguous vectors (scaled residuals of 10^12 at n = 17 and 33).
TYPED_TEST(SolverDenseTest, DenseBlockedOrdersOnePastAPanelVerify) {
  using Space = TypeParam;
  MINIAPP_SKIP_IF_UNAVAILABLE("solver", "dense-blocked");
  const std::pair<int, std::size_t> cases[] = {{64, 17}, {64, 33}, {64, 65}, {16, 49}, {32, 97}, {4, 9}};
  for (const auto& [block_size, n] : cases) {
    solver::Kernel<double, Space> k(params(2, block_size), "dense-blocked", n);
    const Measurement m = measure(k, Space(), solver_spec(MirrorPolicy::AllResident));
    EXPECT_TRUE(m.verification.passed) << "block_size " << block_size << ", n " << n << ": " << m.verification.detail;
  }
}

namespace {
// dense-blocked's systems of k solved with the triangular solves in form F, into k's own outputs
// (copied to the host); device forms factor leaves of wide_leaf_rows rows or more over the device.
// `configure` sets the work space's other choices; returns the systems solved again because a
// resident leaf was given up.
template <solver::blocked::Form F, class Space, class Configure>
int solve_dense_in_form(solver::Kernel<double, Space>& k, int block_size, int wide_leaf_rows,
                        const Configure& configure) {
  solver::blocked::Work<double, Space> w(k.matrices().host.extent(1));
  w.info = k.info().device;
  w.wide_leaf_rows = wide_leaf_rows;
  configure(w);
  std::int64_t step = 0;
  for (std::size_t s = 0; s < k.matrices().host.extent(0); ++s) {
    w.system = static_cast<int>(s);
    solver::blocked::solve_system<F>(Space(), w, k.matrices().device, k.rhs().device, k.solutions().device,
                                     block_size, step);
  }
  Kokkos::fence();
  for (Transferable* f : k.outputs()) f->copy_to_host();
  return w.resident_fallbacks;
}

template <solver::blocked::Form F, class Space>
void solve_dense_in_form(solver::Kernel<double, Space>& k, int block_size,
                         int wide_leaf_rows = solver::blocked::kWideLeafRows) {
  solve_dense_in_form<F>(k, block_size, wide_leaf_rows, [](auto&) {});
}
}  // namespace

// dense-blocked's device forms (trsm leaves in registers, the solves a diagonal block at a time
// over the whole device) run on every space, as the host forms do: each verifies, both give the
// same x within roundoff, and a zero pivot is reported at its column by both, with x zeroed.
// Orders that end inside a solve block and a leaf, panels narrower and wider than a leaf.
TYPED_TEST(SolverDenseTest, DenseBlockedDeviceAndHostFormsAgree) {
  using Space = TypeParam;
  using solver::blocked::Form;
  MINIAPP_SKIP_IF_UNAVAILABLE("solver", "dense-blocked");
  const std::pair<int, std::size_t> cases[] = {{64, 150}, {16, 49}, {32, 200}, {4, 9}, {128, 130}};
  for (const auto& [block_size, n] : cases) {
    const std::string where = "block_size " + std::to_string(block_size) + ", n " + std::to_string(n);
    solver::Kernel<double, Space> k(params(2, block_size), "dense-blocked", n);
    k.generate_inputs(11);
    for (Transferable* f : k.inputs()) f->copy_to_device();
    solve_dense_in_form<Form::Host>(k, block_size);
    ASSERT_TRUE(k.verify(std::nullopt).passed) << where;
    const auto host_x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), k.solutions().host);
    solve_dense_in_form<Form::Device>(k, block_size);
    const Verification v = k.verify(std::nullopt);
    EXPECT_TRUE(v.passed) << where << ": " << v.detail;
    for (std::size_t s = 0; s < 2; ++s)
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(k.solutions().host(s, i), host_x(s, i), 1e-9 * (1 + std::abs(host_x(s, i))))
            << where << ", system " << s << " x" << i;
    // system 1 singular at column n / 2
    const std::size_t column = n / 2;
    for (std::size_t i = 0; i < n; ++i) k.matrices().host(1, i, column) = 0;
    k.matrices().copy_to_device();
    for (const bool device : {false, true}) {
      if (device) solve_dense_in_form<Form::Device>(k, block_size);
      else solve_dense_in_form<Form::Host>(k, block_size);
      const std::string form = device ? " (device form)" : " (host form)";
      EXPECT_EQ(k.info().host(0), 0) << where << form;
      EXPECT_EQ(k.info().host(1), static_cast<int>(column) + 1) << where << form;
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(k.solutions().host(1, i), 0.0) << where << form << " x" << i;
      EXPECT_NE(k.verify(std::nullopt).detail.find("zero pivot in column " + std::to_string(column)), std::string::npos)
          << where << form;
    }
  }
}

// A panel leaf factored over the whole device (a launch per column, rows left in place and
// placed at the end) does the one team's arithmetic in another order of rows: the same pivots,
// so the same x to the last bit, on every space. Leaves of every height down to one row (all
// leaves over the device, then those of 40 rows or more, the rest in one team); a zero pivot is
// reported at its column, in the first leaf and in a later one, and the leaves after it do nothing.
TYPED_TEST(SolverDenseTest, DenseBlockedLeavesOverTheDeviceGiveTheOneTeamResult) {
  using Space = TypeParam;
  using solver::blocked::Form;
  MINIAPP_SKIP_IF_UNAVAILABLE("solver", "dense-blocked");
  const std::pair<int, std::size_t> cases[] = {{64, 150}, {16, 49}, {32, 200}, {4, 9}, {128, 130}, {16, 16}};
  const int one_team = std::numeric_limits<int>::max();
  for (const auto& [block_size, n] : cases) {
    solver::Kernel<double, Space> k(params(2, block_size), "dense-blocked", n);
    k.generate_inputs(17);
    for (Transferable* f : k.inputs()) f->copy_to_device();
    solve_dense_in_form<Form::Device>(k, block_size, one_team);
    const auto team_x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), k.solutions().host);
    for (const int wide_from : {0, 40}) {
      const std::string where = "block_size " + std::to_string(block_size) + ", n " + std::to_string(n) +
                                ", leaves of " + std::to_string(wide_from) + " rows or more over the device";
      solve_dense_in_form<Form::Device>(k, block_size, wide_from);
      const Verification v = k.verify(std::nullopt);
      EXPECT_TRUE(v.passed) << where << ": " << v.detail;
      for (std::size_t s = 0; s < 2; ++s)
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(k.solutions().host(s, i), team_x(s, i)) << where << ", system " << s << " x" << i;
    }
    // system 0 singular at its first column, system 1 at column n / 2
    for (std::size_t i = 0; i < n; ++i) k.matrices().host(0, i, 0) = 0, k.matrices().host(1, i, n / 2) = 0;
    k.matrices().copy_to_device();
    for (const int wide_from : {one_team, 0}) {
      const std::string where = "block_size " + std::to_string(block_size) + ", n " + std::to_string(n) +
                                (wide_from == 0 ? " over the device" : " in one team");
      solve_dense_in_form<Form::Device>(k, block_size, wide_from);
      EXPECT_EQ(k.info().host(0), 1) << where;
      EXPECT_EQ(k.info().host(1), static_cast<int>(n / 2) + 1) << where;
      for (std::size_t s = 0; s < 2; ++s)
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(k.solutions().host(s, i), 0.0) << where << " x" << i;
    }
  }
}

// A panel leaf factored resident (one launch: its rows in the scratch of teams that all run at
// once, a barrier in global memory a column) does the one team's arithmetic: the same pivots, so
// the same x to the last bit, on every space. Every leaf resident or those of 40 rows or more;
// teams of 8 rows (as many teams as run at once: the device's multiprocessors, the host's
// threads) or of 256; a zero pivot is reported at its column, in the first leaf and in a later
// one. None is given up. On host spaces also teams forced beyond those that run at once: their
// first barrier is given up (the team waiting spins its limit) and the system is solved again
// without resident leaves, once per system, to the same bits. On a device the barrier is given up
// after 2^16 spins (milliseconds; a working one waits microseconds): a barrier that does not work
// fails the test in seconds, where the workload's limit (seconds a solve) would take minutes.
TYPED_TEST(SolverDenseTest, DenseBlockedResidentLeavesGiveTheOneTeamResult) {
  using Space = TypeParam;
  using solver::blocked::Form;
  using Work = solver::blocked::Work<double, Space>;
  MINIAPP_SKIP_IF_UNAVAILABLE("solver", "dense-blocked");
  // host threads may be descheduled mid-wait (CI's two cores): the workload's limit there
  const auto resident = [](Work& w, const int from, const int team_rows) {
    w.resident_leaf_rows = from;
    w.resident_team_rows = team_rows;
    if constexpr (!is_host_space<Space>()) w.resident_spin_limit = 1 << 16;
  };
  const std::pair<int, std::size_t> cases[] = {{64, 150}, {16, 49}, {32, 200}, {4, 9}, {128, 130}, {16, 16}};
  const int one_team = std::numeric_limits<int>::max();
  for (const auto& [block_size, n] : cases) {
    solver::Kernel<double, Space> k(params(2, block_size), "dense-blocked", n);
    k.generate_inputs(23);
    for (Transferable* f : k.inputs()) f->copy_to_device();
    solve_dense_in_form<Form::Device>(k, block_size, one_team);
    const auto team_x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), k.solutions().host);
    for (const int resident_from : {0, 40})
      for (const int team_rows : {8, 256}) {
        const std::string where = "block_size " + std::to_string(block_size) + ", n " + std::to_string(n) +
                                  ", leaves of " + std::to_string(resident_from) + " rows or more resident, " +
                                  std::to_string(team_rows) + " rows a team";
        const int again = solve_dense_in_form<Form::Device>(
            k, block_size, one_team, [&](Work& w) { resident(w, resident_from, team_rows); });
        EXPECT_EQ(again, 0) << where;
        const Verification v = k.verify(std::nullopt);
        EXPECT_TRUE(v.passed) << where << ": " << v.detail;
        for (std::size_t s = 0; s < 2; ++s)
          for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(k.solutions().host(s, i), team_x(s, i)) << where << ", system " << s << " x" << i;
      }
    if constexpr (is_host_space<Space>()) {
      const int again = solve_dense_in_form<Form::Device>(k, block_size, one_team, [](Work& w) {
        w.resident_leaf_rows = 0;
        w.resident_teams = static_cast<int>(Space().concurrency()) + 1;
        w.resident_spin_limit = 1 << 16;
      });
      const std::string where = "block_size " + std::to_string(block_size) + ", n " + std::to_string(n) +
                                ", more teams than run at once";
      EXPECT_EQ(again, 2) << where;
      for (std::size_t s = 0; s < 2; ++s)
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(k.solutions().host(s, i), team_x(s, i)) << where << ", system " << s << " x" << i;
    }
    // system 0 singular at its first column, system 1 at column n / 2
    for (std::size_t i = 0; i < n; ++i) k.matrices().host(0, i, 0) = 0, k.matrices().host(1, i, n / 2) = 0;
    k.matrices().copy_to_device();
    const std::string where = "block_size " + std::to_string(block_size) + ", n " + std::to_string(n) + " resident";
    EXPECT_EQ(solve_dense_in_form<Form::Device>(k, block_size, one_team, [&](Work& w) { resident(w, 0, 8); }), 0)
        << where;
    EXPECT_EQ(k.info().host(0), 1) << where;
    EXPECT_EQ(k.info().host(1), static_cast<int>(n / 2) + 1) << where;
    for (std::size_t s = 0; s < 2; ++s)
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(k.solutions().host(s, i), 0.0) << where << " x" << i;
  }
}

// dense-vendor and dense-blocked factor the same larger systems (orders where LAPACK blocks its
// factorisation and OpenBLAS splits it across threads): both verify and find the same x.
TYPED_TEST(SolverDenseTest, DenseVendorAgreesWithDenseBlockedOnLargerSystems) {
  using Space = TypeParam;
  MINIAPP_SKIP_IF_UNAVAILABLE("solver", "dense-vendor");
  MINIAPP_SKIP_IF_UNAVAILABLE("solver", "dense-blocked");
  for (const std::size_t n : {129, 300}) {
    solver::Kernel<double, Space> vendor(params(2, 64), "dense-vendor", n), blocked(params(2, 64), "dense-blocked", n);
    const Measurement mv = measure(vendor, Space(), solver_spec(MirrorPolicy::AllResident));
    const Measurement mb = measure(blocked, Space(), solver_spec(MirrorPolicy::AllResident));
    ASSERT_TRUE(mv.verification.passed) << n << ": " << mv.verification.detail;
    ASSERT_TRUE(mb.verification.passed) << n << ": " << mb.verification.detail;
    for (std::size_t s = 0; s < 2; ++s)
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(vendor.solutions().host(s, i), blocked.solutions().host(s, i),
                    1e-8 * (1 + std::abs(blocked.solutions().host(s, i))))
            << "n " << n << " system " << s << " x" << i;
  }
}
