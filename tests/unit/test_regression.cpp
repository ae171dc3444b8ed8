#include "miniapp/workloads/regression/regression.hpp"

#include "miniapp/core/deck.hpp"
#include "miniapp/core/diagnostics.hpp"
#include "miniapp/core/interrupt.hpp"
#include "miniapp/core/workload.hpp"
#include "kernel_helpers.hpp"
#include "space_types.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace miniapp;
using miniapp::testing::policies_for;
using miniapp::testing::run_once;

template <class Space>
class RegressionTest : public ::testing::Test {};
TYPED_TEST_SUITE(RegressionTest, miniapp::testing::SpaceTypes, miniapp::testing::SpaceNames);

namespace {

// One fit without the harness' warm-up: for the tests that need many steps.
template <class Scalar, class Space>
Verification fit_and_verify(regression::Kernel<Scalar, Space>& k, std::uint64_t seed = 2024) {
  k.generate_inputs(seed);
  run_once(k);
  return k.verify(std::nullopt);
}

MeasurementSpec regression_spec(MirrorPolicy policy, int repetitions = 1) {
  MeasurementSpec s;
  s.policy = policy;
  s.warmup = 1;
  s.repetitions = repetitions;
  s.seed = 2024;
  return s;
}

regression::Params single(std::int64_t iterations, double lr = 0.1) {
  regression::Params p;
  p.iterations = iterations;
  p.learning_rate = lr;
  return p;
}

regression::Params multivariate(int features, std::int64_t iterations, double lr) {
  regression::Params p;
  p.features = features;
  p.iterations = iterations;
  p.learning_rate = lr;
  return p;
}

// The rows of the tests that compare the fused gradient's forms, on Memory, in Scalar (rounded
// from double): x(i, j) = sin(0.37 (i cols + j) + 0.1), y(i) = cos(0.11 i), beta(j) = 0.5 - 0.03 j.
template <class Memory, class Scalar = double>
struct SineRows {
  Kokkos::View<Scalar**, Kokkos::LayoutRight, Memory> x;
  Kokkos::View<Scalar*, Kokkos::LayoutRight, Memory> y, beta;
  SineRows(const std::size_t n, const std::size_t cols) : x("x", n, cols), y("y", n), beta("beta", cols) {
    auto hx = Kokkos::create_mirror_view(x);
    auto hy = Kokkos::create_mirror_view(y);
    auto hb = Kokkos::create_mirror_view(beta);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < cols; ++j)
        hx(i, j) = static_cast<Scalar>(std::sin(0.37 * static_cast<double>(i * cols + j) + 0.1));
      hy(i) = static_cast<Scalar>(std::cos(0.11 * static_cast<double>(i)));
    }
    for (std::size_t j = 0; j < cols; ++j) hb(j) = static_cast<Scalar>(0.5 - 0.03 * static_cast<double>(j));
    Kokkos::deep_copy(x, hx);
    Kokkos::deep_copy(y, hy);
    Kokkos::deep_copy(beta, hb);
  }
};

template <class Scalar, class Space>
std::vector<double> fitted(regression::Kernel<Scalar, Space>& k) {
  std::vector<double> b;
  for (std::size_t j = 0; j < k.beta().host.extent(0); ++j) b.push_back(static_cast<double>(k.beta().host(j)));
  return b;
}

}  // namespace

// y = 3x + 1 exactly on x = 0, 1, 2, 3: gradient descent reaches (3, 1) to rounding.
TYPED_TEST(RegressionTest, ExactLineIsRecovered) {
  using Space = TypeParam;
  for (const std::string& variant : miniapp::testing::runnable("regression", {"blas", "fused"})) {
    regression::Kernel<double, Space> k(single(3000, 0.05), variant, 4);
    for (std::size_t i = 0; i < 4; ++i) {
      k.x().host(i, 0) = static_cast<double>(i);
      k.x().host(i, 1) = 1.0;
      k.y().host(i) = 3.0 * static_cast<double>(i) + 1.0;
    }
    run_once(k);
    EXPECT_NEAR(k.beta().host(0), 3.0, 1e-9) << variant;
    EXPECT_NEAR(k.beta().host(1), 1.0, 1e-9) << variant;
    // The first recorded loss is that of beta = 0: mean(y^2) = (1 + 16 + 49 + 100) / 4.
    EXPECT_DOUBLE_EQ(k.loss().host(0), 41.5) << variant;
    const Verification v = k.verify(std::nullopt);
    EXPECT_TRUE(v.passed) << variant << ": " << v.detail;
    EXPECT_NE(v.detail.find("converged"), std::string::npos) << v.detail;
  }
}

// The seed's first experiment: 50 noisy samples of y = 2x + 5, 10000 steps at lr 0.1.
TYPED_TEST(RegressionTest, SeedSingleVariableRecoversTwoAndFive) {
  using Space = TypeParam;
  for (const std::string& variant : miniapp::testing::runnable("regression", {"blas", "fused"})) {
    regression::Kernel<float, Space> k(single(10000), variant, 50);
    const Verification v = fit_and_verify(k);
    EXPECT_TRUE(v.passed) << variant << ": " << v.detail;
    EXPECT_NEAR(k.beta().host(0), 2.0, 0.3) << variant;
    EXPECT_NEAR(k.beta().host(1), 5.0, 0.15) << variant;
    EXPECT_NE(v.detail.find("; converged"), std::string::npos) << v.detail;
  }
}

TYPED_TEST(RegressionTest, EveryVariantVerifiesUnderEveryPolicyAndVariantsAgree) {
  using Space = TypeParam;
  const std::size_t n = 203;  // not a multiple of the fused kernel's row block
  const regression::Params models[] = {single(400), multivariate(5, 400, 0.05)};
  for (const regression::Params& p : models) {
    for (MirrorPolicy policy : policies_for<Space>()) {
      std::vector<double> first;
      for (const std::string& variant : miniapp::testing::runnable("regression", {"blas", "fused"})) {
        regression::Kernel<double, Space> k(p, variant, n);
        const Measurement m = measure(k, Space(), regression_spec(policy, 2));
        EXPECT_TRUE(m.verification.passed)
            << variant << " " << to_string(policy) << " features " << p.features << ": " << m.verification.detail;
        const std::vector<double> b = fitted(k);
        if (first.empty()) {
          first = b;
          continue;
        }
        for (std::size_t j = 0; j < b.size(); ++j) EXPECT_NEAR(b[j], first[j], 1e-10) << variant << " beta " << j;
      }
    }
  }
}

// The fused kernels take blocks of rows (a short last block goes row by row) and columns in
// packs or lanes of one vector (a column tail goes alone, or as a pack ending at the row's end):
// every remainder of both must be summed once. On CPUs, models at least one pack wide (8 float32
// or 4 float64 columns) take the hand-vectorised kernel, 64 rows per call: a row at a time up to
// 16 packs, blocks of one pack's width of rows beyond; narrower ones the portable kernel. N >
// columns, so the fit keeps a loss of the noise's size that the replay's Gram form resolves.
TYPED_TEST(RegressionTest, FusedCoversEveryRowBlockAndColumnTail) {
  using Space = TypeParam;
  // Columns 2, 4, 6, 8, 11, 16: packs of 4 (float64) and 8 (float32) with no tail, tails of
  // every kind, exactly one pack and none; N up to several calls of 64 rows plus a few.
  // Columns 64, 65, 128, 131: the widest models whose rows stay in registers (16 packs: 64
  // float64 columns, 128 float32) and the narrowest that go in blocks of rows.
  struct Shape {
    int features;
    std::vector<std::size_t> rows;
    double lr;  // below 2 / the largest eigenvalue of (2/N) X^T X, about cols / 2
  };
  const std::vector<std::size_t> narrow_rows{41, 42, 43, 44, 131}, wide_rows{150, 197};
  const Shape shapes[] = {{1, narrow_rows, 0.02},  {3, narrow_rows, 0.02},  {5, narrow_rows, 0.02},
                          {7, narrow_rows, 0.02},  {10, narrow_rows, 0.02}, {15, narrow_rows, 0.02},
                          {63, wide_rows, 0.01},   {64, wide_rows, 0.01},   {127, wide_rows, 0.005},
                          {130, wide_rows, 0.005}};
  for (const Shape& shape : shapes) {
    for (std::size_t n : shape.rows) {
      regression::Kernel<double, Space> kd(multivariate(shape.features, 40, shape.lr), "fused", n);
      const Verification vd = fit_and_verify(kd, 11 + n);
      EXPECT_TRUE(vd.passed) << "float64 features " << shape.features << " N " << n << ": " << vd.detail;
      regression::Kernel<float, Space> kf(multivariate(shape.features, 40, shape.lr), "fused", n);
      const Verification vf = fit_and_verify(kf, 11 + n);
      EXPECT_TRUE(vf.passed) << "float32 features " << shape.features << " N " << n << ": " << vf.detail;
    }
  }
}

// PackedGradient, the form fused_sums takes on host spaces, gives FusedGradient's sums to rounding
// in each of its three loops, whichever the build's ISA picks for a row width: rows held in
// registers, only the sums held with two rows a step (lean_rows: float64 past 8 packs in AVX2
// builds), and blocks of rows (past 16 packs). Widths of 1, 2, 3, 13 and 16 packs of float64 and
// one past, with and without a tail; row counts around a call's 64 rows and odd ones (lean_rows'
// last row alone).
TYPED_TEST(RegressionTest, PackedGradientLoopsGiveFusedGradientSums) {
  using Space = TypeParam;
#if MINIAPP_HOST_SIMD
  if constexpr (!is_host_space<Space>()) {
    GTEST_SKIP() << "PackedGradient is the host spaces' form; devices take TeamGradient";
  } else {
    using Memory = typename Space::memory_space;
    using Range = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;
    for (const std::size_t cols : {4u, 8u, 9u, 51u, 52u, 64u, 71u}) {
      for (const std::size_t n : {1u, 63u, 64u, 65u, 130u, 1001u}) {
        SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(cols));
        const SineRows<Memory> rows(n, cols);
        const auto& x = rows.x;
        const auto& y = rows.y;
        const auto& beta = rows.beta;
        Kokkos::View<double*, Kokkos::LayoutRight, Memory> range("range", cols + 1);
        regression::range_gradient_sums(Space(), x, y, beta, range);
        const auto check = [&](auto form, const char* name) {
          Kokkos::View<double*, Kokkos::LayoutRight, Memory> sums("sums", cols + 1);
          const decltype(form) f{x, y, beta, static_cast<unsigned>(cols + 1)};
          Kokkos::parallel_reduce("test::packed", Range(Space(), 0, f.calls(n)), f, sums);
          Kokkos::fence();
          for (std::size_t j = 0; j <= cols; ++j)
            EXPECT_NEAR(sums(j), range(j), 1e-12 * (static_cast<double>(n) + std::abs(range(j)))) << name << ", sum " << j;
        };
        check(regression::PackedGradient<double, Memory, 16, 16>{}, "held");
        check(regression::PackedGradient<double, Memory, 16, 0>{}, "two rows a step");
        check(regression::PackedGradient<double, Memory, 0, 0>{}, "blocks");
        check(regression::PackedGradient<double, Memory>{}, "the build's choice");
      }
    }
  }
#else
  GTEST_SKIP() << "this build has no host SIMD packs (MINIAPP_HOST_SIMD is 0: a device backend or another compiler)";
#endif
}

// TeamGradient, the form fused_sums takes on device spaces (8 lanes per row, 32 threads to a team,
// up to 32 rows per thread), gives FusedGradient's sums to rounding: row counts that end a team's
// block early or leave a team a few rows, and on host spaces blocks of 1 to 32 rows per thread
// (team_rows: the rows over the space's threads); models of 2, 9, 51 and 71 columns (shorter and
// longer than the 8 lanes and than a warp). Run on every space, so the host builds check the GPU
// form's arithmetic too; partials too small for the teams are refused. A column per lane per step
// (Chunk 1) as well, and the register form (fused_sums' choice on devices up to 64 columns) for
// the rows it takes; a wider X is refused by it.
TYPED_TEST(RegressionTest, TeamGradientSumsEqualFusedGradientSums) {
  using Space = TypeParam;
  using Memory = typename Space::memory_space;
  {
    Kokkos::View<double**, Kokkos::LayoutRight, Memory> x("x", 1000, 3);
    Kokkos::View<double*, Kokkos::LayoutRight, Memory> y("y", 1000), beta("beta", 3), sums("sums", 4);
    Kokkos::View<double*, Memory> partials("partials", regression::team_gradient_partials_size<double, Space>(1000, 3) - 1);
    EXPECT_THROW(regression::team_gradient_sums(Space(), x, y, beta, partials, sums), std::logic_error);
  }
  for (const std::size_t cols : {2u, 9u, 51u, 71u}) {
    for (const std::size_t n : {1u, 31u, 255u, 257u, 1003u}) {
      SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(cols));
      const SineRows<Memory> rows(n, cols);
      const auto& x = rows.x;
      const auto& y = rows.y;
      const auto& beta = rows.beta;
      Kokkos::View<double*, Kokkos::LayoutRight, Memory> teams("teams", cols + 1), range("range", cols + 1);
      Kokkos::View<double*, Memory> partials(
          "partials", regression::team_gradient_partials_size<double, Space>(n, cols));
      Kokkos::View<double*, Kokkos::LayoutRight, Memory> single("single column steps", cols + 1),
          four("four lanes", cols + 1);
      // float32's lanes on double values (TeamGradient's teams depend on its lanes)
      Kokkos::View<double*, Memory> partials4(
          "partials", regression::team_gradient_partials_size<double, Space, 4>(n, cols));
      regression::team_gradient_sums(Space(), x, y, beta, partials, teams);
      regression::team_gradient_sums<8, 1>(Space(), x, y, beta, partials, single);
      regression::team_gradient_sums<4>(Space(), x, y, beta, partials4, four);
      regression::range_gradient_sums(Space(), x, y, beta, range);
      constexpr int kColumns = regression::kTeamGradientRegisterColumns;
      Kokkos::View<double*, Kokkos::LayoutRight, Memory> registers("registers", cols + 1);
      // the register form with the workload's lanes, on partials sized as the workload sizes them
      // for the rows it takes the form for (too few would throw), else float32's lanes' partials
      constexpr int kRegisterLanes = regression::kTeamGradientRegisterLanes;
      const auto fused_partials = regression::team_gradient_register_form_takes(cols)
                                      ? Kokkos::View<double*, Memory>(
                                            "partials", regression::fused_partials_size<double, Space>(n, cols))
                                      : partials4;
      if (cols <= static_cast<std::size_t>(kColumns))
        regression::team_gradient_sums<kRegisterLanes, regression::kTeamGradientChunk, kColumns>(
            Space(), x, y, beta, fused_partials, registers);
      else
        EXPECT_THROW((regression::team_gradient_sums<kRegisterLanes, regression::kTeamGradientChunk, kColumns>(
                         Space(), x, y, beta, fused_partials, registers)),
                     std::logic_error);
      Kokkos::fence();
      auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), teams);
      auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), single);
      auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), four);
      auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), range);
      for (std::size_t j = 0; j <= cols; ++j) {
        EXPECT_NEAR(ht(j), hr(j), 1e-12 * (static_cast<double>(n) + std::abs(hr(j)))) << "sum " << j;
        EXPECT_NEAR(hs(j), hr(j), 1e-12 * (static_cast<double>(n) + std::abs(hr(j)))) << "sum " << j << ", chunk 1";
        EXPECT_NEAR(hf(j), hr(j), 1e-12 * (static_cast<double>(n) + std::abs(hr(j)))) << "sum " << j << ", 4 lanes";
      }
      if (cols <= static_cast<std::size_t>(kColumns)) {
        auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), registers);
        for (std::size_t j = 0; j <= cols; ++j)
          EXPECT_NEAR(hg(j), hr(j), 1e-12 * (static_cast<double>(n) + std::abs(hr(j)))) << "sum " << j << ", registers";
        // two and three rows a thread at once: the same rows in the same order, so the same sums
        // exactly (blocks of rows that end part way through a thread's last rows among the shapes)
        const auto rows_at_once = [&](auto rows) {
          constexpr int kRows = decltype(rows)::value;
          Kokkos::View<double*, Kokkos::LayoutRight, Memory> held("rows at once", cols + 1);
          regression::team_gradient_sums<kRegisterLanes, regression::kTeamGradientChunk, kColumns, -1, kRows>(
              Space(), x, y, beta, fused_partials, held);
          auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), held);
          for (std::size_t j = 0; j <= cols; ++j)
            EXPECT_EQ(hh(j), hg(j)) << "sum " << j << ", " << kRows << " rows at once";
        };
        rows_at_once(std::integral_constant<int, 2>{});
        rows_at_once(std::integral_constant<int, 3>{});
        // the team's rows through its scratch a tile at a time: the same rows of each thread in the
        // same order, so the same sums to rounding (a compiler may fuse a product into its sum in
        // one form and not the other); rows that are not one stretch are refused
        Kokkos::View<double*, Kokkos::LayoutRight, Memory> staged("staged", cols + 1);
        regression::team_gradient_sums<kRegisterLanes, regression::kTeamGradientChunk, kColumns, -1, 1, true>(
            Space(), x, y, beta, fused_partials, staged);
        auto hst = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), staged);
        for (std::size_t j = 0; j <= cols; ++j)
          EXPECT_NEAR(hst(j), hg(j), 1e-12 * (static_cast<double>(n) + std::abs(hg(j)))) << "sum " << j << ", staged";
        if (n > 1) {
          const auto first = std::make_pair(std::size_t{0}, cols - 1);
          const auto narrower = Kokkos::subview(x, Kokkos::ALL, first);
          EXPECT_THROW((regression::team_gradient_sums<kRegisterLanes, regression::kTeamGradientChunk, kColumns, -1, 1,
                                                       true>(Space(), narrower, y, Kokkos::subview(beta, first),
                                                             fused_partials, staged)),
                       std::logic_error);
        }
      }
      // the narrow form (one lane, up to 3 columns in registers) on the rows it takes, else refused
      constexpr int kNarrow = regression::kTeamGradientNarrowColumns;
      Kokkos::View<double*, Kokkos::LayoutRight, Memory> narrow("narrow", cols + 1);
      Kokkos::View<double*, Memory> partials1("partials", regression::team_gradient_partials_size<double, Space, 1>(n, cols));
      if (regression::team_gradient_narrow_form_takes(cols)) {
        regression::team_gradient_sums<1, regression::kTeamGradientChunk, kNarrow>(Space(), x, y, beta, partials1, narrow);
        auto hn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), narrow);
        for (std::size_t j = 0; j <= cols; ++j)
          EXPECT_NEAR(hn(j), hr(j), 1e-12 * (static_cast<double>(n) + std::abs(hr(j)))) << "sum " << j << ", narrow";
      } else {
        EXPECT_THROW((regression::team_gradient_sums<1, regression::kTeamGradientChunk, kNarrow>(
                         Space(), x, y, beta, partials1, narrow)),
                     std::logic_error);
      }
    }
  }
}

// The staged register form in float32, where a 16-byte load is four values: tiles that start
// one to three values past a 16-byte boundary (rows of 5 and 51 values) and on one (64), tiles of
// fewer values than a load, and the block's last tile short; the register form's sums to float32's
// rounding of each row's terms (it reads the same rows in the same order; a value of a row
// misplaced moves a sum by the order of the value).
TYPED_TEST(RegressionTest, StagedRegisterSumsEqualRegisterSumsInFloat32) {
  using Space = TypeParam;
  using Memory = typename Space::memory_space;
  constexpr int kLanes = regression::kTeamGradientRegisterLanes, kColumns = regression::kTeamGradientRegisterColumns;
  for (const std::size_t cols : {5u, 51u, 64u}) {
    for (const std::size_t n : {1u, 7u, 300u, 1003u}) {
      SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(cols));
      const SineRows<Memory, float> rows(n, cols);
      const auto& x = rows.x;
      const auto& y = rows.y;
      const auto& beta = rows.beta;
      Kokkos::View<float*, Kokkos::LayoutRight, Memory> held("held", cols + 1), staged("staged", cols + 1);
      Kokkos::View<float*, Memory> partials("partials", regression::fused_partials_size<float, Space>(n, cols));
      regression::team_gradient_sums<kLanes, regression::kTeamGradientChunk, kColumns>(Space(), x, y, beta, partials,
                                                                                      held);
      regression::team_gradient_sums<kLanes, regression::kTeamGradientChunk, kColumns, -1, 1, true>(
          Space(), x, y, beta, partials, staged);
      const auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), held);
      const auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), staged);
      ASSERT_GT(hh(cols), 0.0f) << "the loss sum: squared residuals of rows read";
      for (std::size_t j = 0; j <= cols; ++j)
        EXPECT_NEAR(hs(j), hh(j), 1e-5f * (static_cast<float>(n) + std::abs(hh(j)))) << "sum " << j;
    }
  }
}

// A step in one launch (TeamGradientStep: the last team of each group of 32 adds the group's
// totals, the last group's team adds the groups' and runs the update) gives the fit of the same
// steps as separate launches (team_gradient_sums, then update) to rounding, in both of
// TeamGradient's forms: 25 steps, so the counts of teams done must go back to 0 after every launch
// (a count left behind would make no team, or the wrong one, the last, and the update would not
// run or run early); and the narrow form (one lane, a thread a row) for 2 columns. On a host
// space a team is 32 rows: 31 rows are one team, 1003 one whole
// group, 1056 a group and one team, 20000 twenty groups, the last of 17 teams, run on every
// thread of the space; beta, every step's loss and the last step's sums compared. Partials or
// counts too few for the groups are refused. And the workload's own steps on the space (one
// launch a step on devices) against its separate launches.
TYPED_TEST(RegressionTest, GradientStepInOneLaunchEqualsSumsThenUpdate) {
  using Space = TypeParam;
  using Memory = typename Space::memory_space;
  using Vector = Kokkos::View<double*, Kokkos::LayoutRight, Memory>;
  using FitT = regression::Fit<double, Space, Vector, Vector, Kokkos::View<std::int64_t*, Kokkos::LayoutRight, Memory>>;
  constexpr int kSteps = 25;
  for (const std::size_t cols : {2u, 9u, 51u}) {
    for (const std::size_t n : {31u, 1003u, 1056u, 20000u}) {
      SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(cols));
      const SineRows<Memory> rows(n, cols);
      const auto& x = rows.x;
      const auto& y = rows.y;
      const auto make_fit = [&] {
        return FitT{Vector("beta", cols), Vector("loss", kSteps),
                    Kokkos::View<std::int64_t*, Kokkos::LayoutRight, Memory>("diverged_at", 1),
                    Vector("sums", cols + 1), Vector("best", 2),
                    Vector("partials", regression::fused_partials_size<double, Space>(n, cols)),
                    typename FitT::Counter("teams_done", regression::fused_partials_size<double, Space>(
                                                             n, cols, Space(), true))};
      };
      // the rate 0.5 / cols: below 2 / L, L = 2/N lambda_max(X^T X) <= 2/N trace = 2 mean(|x|^2) cols < cols
      const double inv_n = 1.0 / static_cast<double>(n), rate = 0.5 / static_cast<double>(cols);
      // the narrow form for the rows it takes, else the scratch and the register forms
      const auto forms = regression::team_gradient_narrow_form_takes(cols) ? std::vector<int>{2} : std::vector<int>{0, 1};
      for (const int form : forms) {
        const bool registers = form == 1;
        SCOPED_TRACE(form == 2 ? "narrow form" : registers ? "register form" : "scratch form");
        const FitT one = make_fit(), apart = make_fit();
        const regression::StepUpdate<FitT, double> u1{one, rate * 2.0 * inv_n, inv_n, 1.0};
        const regression::StepUpdate<FitT, double> u2{apart, rate * 2.0 * inv_n, inv_n, 1.0};
        const Space space;
        regression::start(space, one);
        regression::start(space, apart);
        constexpr int kLanes = regression::kTeamGradientRegisterLanes, kChunk = regression::kTeamGradientChunk;
        constexpr int kColumns = regression::kTeamGradientRegisterColumns;
        for (std::int64_t k = 0; k < kSteps; ++k) {
          if (form == 2) {
            constexpr int kNarrow = regression::kTeamGradientNarrowColumns;
            regression::team_gradient_step<1, kChunk, kNarrow>(space, x, y, one.beta, one.partials, one.sums,
                                                                 one.teams_done, u1, k);
            regression::team_gradient_sums<1, kChunk, kNarrow>(space, x, y, apart.beta, apart.partials, apart.sums);
          } else if (registers) {
            regression::team_gradient_step<kLanes, kChunk, kColumns>(space, x, y, one.beta, one.partials, one.sums,
                                                                       one.teams_done, u1, k);
            regression::team_gradient_sums<kLanes, kChunk, kColumns>(space, x, y, apart.beta, apart.partials,
                                                                       apart.sums);
          } else {
            regression::team_gradient_step(space, x, y, one.beta, one.partials, one.sums, one.teams_done, u1, k);
            regression::team_gradient_sums(space, x, y, apart.beta, apart.partials, apart.sums);
          }
          regression::update(space, u2, k);
        }
        space.fence();
        const auto copy = [](const auto& v) { return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v); };
        const auto done = copy(one.teams_done);
        for (std::size_t c = 0; c < done.extent(0); ++c) EXPECT_EQ(done(c), 0u) << "count " << c << " after the last launch";
        const auto b1 = copy(one.beta), b2 = copy(apart.beta);
        const auto l1 = copy(one.loss), l2 = copy(apart.loss);
        const auto s1 = copy(one.sums), s2 = copy(apart.sums);
        const auto d1 = copy(one.diverged_at);
        EXPECT_EQ(d1(0), -1) << "the fit diverged";
        for (std::size_t j = 0; j < cols; ++j) EXPECT_NEAR(b1(j), b2(j), 1e-12 * (1 + std::abs(b2(j)))) << "beta " << j;
        for (int k = 0; k < kSteps; ++k) EXPECT_NEAR(l1(k), l2(k), 1e-12 * (1 + std::abs(l2(k)))) << "loss " << k;
        for (std::size_t j = 0; j <= cols; ++j)
          EXPECT_NEAR(s1(j), s2(j), 1e-12 * (static_cast<double>(n) + std::abs(s2(j)))) << "sum " << j;
        EXPECT_LT(l1(kSteps - 1), l1(0)) << "the steps did not lower the loss";
        if (!registers && n == 20000) {
          const Vector short_partials("partials", regression::team_gradient_step_partials_size<double, Space>(n, cols) - 1);
          EXPECT_THROW(regression::team_gradient_step(space, x, y, one.beta, short_partials, one.sums, one.teams_done,
                                                      u1, 0),
                       std::logic_error);
          const typename FitT::Counter short_counts("teams_done",
                                                    regression::team_gradient_step_counts<double, Space>(n) - 1);
          EXPECT_THROW(regression::team_gradient_step(space, x, y, one.beta, one.partials, one.sums, short_counts, u1, 0),
                       std::logic_error);
        }
      }
    }
  }
  for (const regression::Params& p : {multivariate(50, 30, 0.001), single(30)}) {
    SCOPED_TRACE(std::to_string(p.columns()) + " columns");
    regression::Kernel<double, Space> k(p, "fused", 3000);
    k.generate_inputs(11);
    run_once(k);
    const std::vector<double> steps = fitted(k);
    const Space space;
    k.compute_with_launches(space, false);
    space.fence();
    for (Transferable* f : k.outputs()) f->copy_to_host();
    const std::vector<double> launches = fitted(k);
    ASSERT_EQ(steps.size(), launches.size());
    for (std::size_t j = 0; j < steps.size(); ++j)
      EXPECT_NEAR(steps[j], launches[j], 1e-12 * (1 + std::abs(launches[j]))) << "value " << j;
  }
}

TYPED_TEST(RegressionTest, Float32VerifiesAgainstTheFloat64Replay) {
  using Space = TypeParam;
  for (const std::string& variant : miniapp::testing::runnable("regression", {"blas", "fused"})) {
    regression::Kernel<float, Space> k(multivariate(8, 500, 0.02), variant, 500);
    const Measurement m = measure(k, Space(), regression_spec(MirrorPolicy::InputsResident));
    EXPECT_TRUE(m.verification.passed) << variant << ": " << m.verification.detail;
    EXPECT_GT(m.verification.max_abs_error, 0.0);  // float32 does differ from the replay, within bounds
  }
}

// Repetitions restart from beta = 0 and leave the inputs alone.
TYPED_TEST(RegressionTest, ComputeIsRepeatable) {
  using Space = TypeParam;
  regression::Kernel<float, Space> k(multivariate(3, 200, 0.05), "fused", 100);
  k.generate_inputs(7);
  run_once(k);
  const std::vector<double> once = fitted(k);
  Space space;
  k.compute(space);
  k.compute(space);
  space.fence();
  for (Transferable* f : k.outputs()) f->copy_to_host();
  EXPECT_EQ(fitted(k), once);
}

TYPED_TEST(RegressionTest, SeedMultivariateSettingsReportProgressNotFailure) {
  using Space = TypeParam;
  // lr 0.001 as in the seed, fewer steps: far from the closed form, and said so.
  regression::Kernel<double, Space> k(multivariate(20, 1000, 0.001), "fused", 1000);
  const Measurement m = measure(k, Space(), regression_spec(MirrorPolicy::AllResident));
  EXPECT_TRUE(m.verification.passed) << m.verification.detail;
  EXPECT_NE(m.verification.detail.find("not converged after 1000 steps"), std::string::npos)
      << m.verification.detail;
  EXPECT_NE(m.verification.detail.find("closed form ["), std::string::npos) << m.verification.detail;
  EXPECT_NE(m.verification.detail.find("true ["), std::string::npos) << m.verification.detail;
  EXPECT_NE(m.verification.detail.find("final loss"), std::string::npos) << m.verification.detail;
}

// Many rows in float64: 50 features, 10^5 rows, 200 steps at lr 0.01. The replay's own sums over
// the rows once rounded by about sqrt(N) ulps and put it 10x the bound away from this (correct)
// fit; the float64 fit is within a few ulps of an accurate replay.
TYPED_TEST(RegressionTest, ManyRowsInFloat64VerifyAgainstTheReplay) {
  using Space = TypeParam;
  for (const std::string& variant : miniapp::testing::runnable("regression", {"fused", "blas"})) {
    regression::Kernel<double, Space> k(multivariate(50, 200, 0.01), variant, 100000);
    const Verification v = fit_and_verify(k);
    EXPECT_TRUE(v.passed) << variant << ": " << v.detail;
    EXPECT_NE(v.detail.find("not converged after 200 steps"), std::string::npos) << variant << ": " << v.detail;
  }
}

TYPED_TEST(RegressionTest, ConvergedMultivariateFitRecoversIntegerCoefficients) {
  using Space = TypeParam;
  // 1/L ~ 0.3 here (L = 2/N lambda_max(X^T X) ~ 2 (P/4 + 1)).
  regression::Kernel<double, Space> k(multivariate(4, 2000, 0.25), "fused", 4000);
  const Verification v = fit_and_verify(k, 2024);
  EXPECT_TRUE(v.passed) << v.detail;
  EXPECT_NE(v.detail.find("; converged"), std::string::npos) << v.detail;
  for (std::size_t j = 0; j < 5; ++j) {
    const double truth = regression::true_coefficient(false, regression::beta_stream(2024), j);
    EXPECT_GE(truth, 1.0);
    EXPECT_LE(truth, 9.0);
    EXPECT_NEAR(k.beta().host(j), truth, 0.35) << "beta " << j;
  }
}

// lr 1 is above 2/L ~ 0.79 for x in [0, 1): the loss grows, the case fails with the advice.
TYPED_TEST(RegressionTest, DivergenceFailsWithTheLargestStableRate) {
  using Space = TypeParam;
  for (const std::string& variant : miniapp::testing::runnable("regression", {"blas", "fused"})) {
    regression::Kernel<float, Space> k(single(500, 1.0), variant, 1000);
    const Verification v = fit_and_verify(k);
    EXPECT_FALSE(v.passed) << variant;
    EXPECT_NE(v.detail.find("diverged at iteration "), std::string::npos) << v.detail;
    EXPECT_NE(v.detail.find("learning rate 1 is too large for this data, try <= 0.39"), std::string::npos) << v.detail;
    // The device stopped updating once the loss grew: beta is the last good iterate, finite.
    const std::int64_t at = k.diverged_at().host(0);
    EXPECT_GT(at, 0) << variant;
    EXPECT_TRUE(std::isfinite(static_cast<double>(k.beta().host(0)))) << variant;
    for (std::int64_t i = 1; i < at; ++i) EXPECT_LE(k.loss().host(i), k.loss().host(0) * 1.01f) << i;
  }
}

// A stable rate just under 2/L oscillates but the loss still falls: no false alarm.
TYPED_TEST(RegressionTest, LargeStableRateIsNotDivergence) {
  using Space = TypeParam;
  regression::Kernel<double, Space> k(single(3000, 0.7), "fused", 1000);
  const Verification v = fit_and_verify(k);
  EXPECT_TRUE(v.passed) << v.detail;
  EXPECT_EQ(k.diverged_at().host(0), -1);
}

TYPED_TEST(RegressionTest, CorruptedCoefficientFailsVerificationAndIsNamed) {
  using Space = TypeParam;
  MINIAPP_SKIP_IF_UNAVAILABLE("regression", "blas");
  regression::Kernel<double, Space> k(multivariate(3, 300, 0.05), "blas", 64);
  k.generate_inputs(5);
  run_once(k);
  ASSERT_TRUE(k.verify(std::nullopt).passed);
  k.beta().host(1) += 1e-4;
  const Verification v = k.verify(std::nullopt);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("beta[1]"), std::string::npos) << v.detail;
  EXPECT_NEAR(v.max_abs_error, 1e-4, 1e-6);
}

TYPED_TEST(RegressionTest, WrongFirstStepIsCaughtByTheLossHistory) {
  using Space = TypeParam;
  regression::Kernel<double, Space> k(single(50), "fused", 64);
  k.generate_inputs(5);
  run_once(k);
  k.loss().host(1) *= 1.01;
  const Verification v = k.verify(std::nullopt);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("loss[1]"), std::string::npos) << v.detail;
}

TYPED_TEST(RegressionTest, InputsGeneratedOnTheDeviceMatchHostGeneratedOnes) {
  using Space = TypeParam;
  for (const regression::Params& p : {single(10), multivariate(6, 10, 0.01)}) {
    regression::Kernel<double, Space> on_host(p, "fused", 77), on_device(p, "fused", 77);
    MeasurementSpec spec = regression_spec(MirrorPolicy::InputsResident);
    const Measurement mh = measure(on_host, Space(), spec);
    spec.generate = Generation::Device;
    const Measurement md = measure(on_device, Space(), spec);
    EXPECT_TRUE(md.verification.passed) << md.verification.detail;
    EXPECT_EQ(md.bytes_one_time, 0u);
    const std::size_t cols = p.columns();
    for (std::size_t i = 0; i < 77; ++i) {
      for (std::size_t j = 0; j < cols; ++j) ASSERT_EQ(on_host.x().host(i, j), on_device.x().host(i, j)) << i << "," << j;
      // The noise goes through log/cos, which host and device libraries may round differently.
      ASSERT_NEAR(on_host.y().host(i), on_device.y().host(i), 1e-12 * std::abs(on_host.y().host(i))) << i;
    }
    if (p.single_variable())
      for (std::size_t i = 1; i < 77; ++i) ASSERT_LT(on_host.x().host(i - 1, 0), on_host.x().host(i, 0)) << "sorted x";
    for (std::size_t i = 0; i < 77; ++i) ASSERT_EQ(on_host.x().host(i, cols - 1), 1.0) << "intercept column";
  }
}

TYPED_TEST(RegressionTest, WorkEstimateCountsPassesOverX) {
  MINIAPP_SKIP_IF_UNAVAILABLE("regression", "blas");
  regression::Kernel<double, TypeParam> blas(multivariate(50, 10, 0.001), "blas", 1000);
  regression::Kernel<double, TypeParam> fused(multivariate(50, 10, 0.001), "fused", 1000);
  EXPECT_DOUBLE_EQ(fused.work().flops, 4.0 * 1000 * 51 * 10);
  EXPECT_DOUBLE_EQ(blas.work().flops, fused.work().flops);
  const double x_bytes = 1000.0 * 51 * sizeof(double) * 10;
  EXPECT_GE(fused.work().bytes_read, x_bytes);
  EXPECT_LT(fused.work().bytes_read, 1.1 * x_bytes);
  EXPECT_GE(blas.work().bytes_read, 2 * x_bytes);
  EXPECT_LT(blas.work().bytes_read, 2.2 * x_bytes);
}

TEST(RegressionReplay, StepSizeBoundFromTheLargestEigenvalue) {
  // X = [x, 1] with x = 0, 1: X^T X = [[1, 1], [1, 2]], lambda_max = (3 + sqrt 5) / 2.
  regression::NormalEquations ne;
  ne.cols = 2;
  ne.gram = {1, 1, 1, 2};
  ne.xty = {0, 0};
  EXPECT_NEAR(regression::hessian_largest_eigenvalue(ne, 2), (3 + std::sqrt(5.0)) / 2, 1e-9);
  EXPECT_DOUBLE_EQ(regression::round_down_3(0.39487), 0.394);
  EXPECT_DOUBLE_EQ(regression::round_down_3(0.0368), 0.0368);
}

TEST(RegressionParams, DefaultsFollowTheSeed) {
  regression::Params p;
  EXPECT_EQ(p.columns(), 2u);
  EXPECT_DOUBLE_EQ(p.rate(), 0.1);
  EXPECT_DOUBLE_EQ(p.noise_scale(), 0.1);
  p.features = 50;
  EXPECT_EQ(p.columns(), 51u);
  EXPECT_DOUBLE_EQ(p.rate(), 0.001);
  EXPECT_DOUBLE_EQ(p.noise_scale(), 1.0);
}

TEST(RegressionParams, BadValuesAreRejectedWithTheirKey) {
  const char* bad[] = {"features: -1", "iterations: 0", "learning_rate: 0", "learning_rate: -0.1", "noise: -1",
                       "noise: loud"};
  for (const char* text : bad) {
    Diagnostics diag("deck.yaml");
    MapReader r(YAML::Load(text), "cases[0]", diag);
    regression::RegressionWorkload::parse(r);
    r.finish();
    ASSERT_EQ(diag.all().size(), 1u) << text;
    const std::string key = std::string(text).substr(0, std::string(text).find(':'));
    EXPECT_EQ(diag.all()[0].path, "cases[0]." + key) << text;
  }
  Diagnostics ok("deck.yaml");
  MapReader r(YAML::Load("{features: 50, iterations: 1e4, learning_rate: 0.001, noise: 0}"), "cases[0]", ok);
  const regression::Params p = regression::RegressionWorkload::parse(r);
  r.finish();
  EXPECT_TRUE(ok.empty());
  EXPECT_EQ(p.features, 50);
  EXPECT_EQ(p.iterations, 10000);
  EXPECT_DOUBLE_EQ(p.noise_scale(), 0.0);
}

// A kernel that leaves out the last rows of X (a loop bound one block short: 8 rows, two of the
// portable kernel's blocks, one float32 pack) must fail. The seed's single-variable deck: N =
// 10000, 10000 steps in float32, where the old bound, 4 eps (iterations + sqrt N) for the
// coefficients and the first losses alike, let up to 8 dropped rows pass.
TYPED_TEST(RegressionTest, DroppedTailRowsFailVerification) {
  using Space = TypeParam;
  const std::size_t n = 10000, dropped = 8;
  for (const std::string& variant : miniapp::testing::runnable("regression", {"blas", "fused"})) {
    regression::Kernel<float, Space> k(single(10000, 0.1), variant, n);
    k.generate_inputs(2024);
    // The kernel sees zero rows (r_i = 0: nothing added to the gradient or the loss); the
    // verification sees the data.
    std::vector<float> kept;
    for (std::size_t i = n - dropped; i < n; ++i) {
      kept.insert(kept.end(), {k.x().host(i, 0), k.x().host(i, 1), k.y().host(i)});
      k.x().host(i, 0) = k.x().host(i, 1) = k.y().host(i) = 0;
    }
    run_once(k);
    for (std::size_t i = n - dropped, e = 0; i < n; ++i, e += 3) {
      k.x().host(i, 0) = kept[e];
      k.x().host(i, 1) = kept[e + 1];
      k.y().host(i) = kept[e + 2];
    }
    const Verification v = k.verify(std::nullopt);
    EXPECT_FALSE(v.passed) << variant << ": " << v.detail;
    // The same fit of all rows passes.
    regression::Kernel<float, Space> whole(single(10000, 0.1), variant, n);
    const Verification w = fit_and_verify(whole, 2024);
    EXPECT_TRUE(w.passed) << variant << ": " << w.detail;
  }
}

namespace {

// Whether Space runs the fused steps in one parallel region; on Serial and device spaces, that it
// does not. The reason when it does not.
template <class Space>
std::optional<std::string> without_one_region() {
  const int threads = regression::fused_region_threads(Space());
  if constexpr (is_host_space<Space>()) {
    if (Space().concurrency() > 1) {
      EXPECT_GT(threads, 1) << "a host space of " << Space().concurrency() << " threads runs its steps as launches";
      return std::nullopt;
    }
  }
  EXPECT_EQ(threads, 1);
  return space_name<Space>() + " runs " + std::to_string(Space().concurrency()) +
         " thread(s) or is a device: its steps are a reduction and an update launch each";
}

}  // namespace

// On a host space of several threads the fused variant runs all its steps in one parallel region,
// the threads meeting once per step, each thread with its own copy of beta (one_region.hpp). Its
// loss history, beta and divergence step equal, to rounding, those of a reduction launch and an
// update launch per step on the same data: models of 2 columns (the portable kernel), 9 (one row
// in registers on CPUs with SIMD) and 71 (blocks of rows), N not a multiple of the threads or of
// the rows per call, and a rate that diverges.
TYPED_TEST(RegressionTest, StepsInOneRegionAgreeWithALaunchPerStep) {
  using Space = TypeParam;
  if (const auto reason = without_one_region<Space>()) GTEST_SKIP() << *reason;
  struct Shape {
    int features;
    double lr;
    bool diverges;
  };
  const Shape shapes[] = {{0, 0.1, false}, {8, 0.02, false}, {70, 0.005, false}, {8, 1.0, true}};
  const std::size_t n = 1003;
  const std::int64_t steps = 60;
  for (const Shape& shape : shapes) {
    SCOPED_TRACE("features " + std::to_string(shape.features) + ", rate " + std::to_string(shape.lr));
    regression::Kernel<double, Space> k(multivariate(shape.features, steps, shape.lr), "fused", n);
    EXPECT_EQ(k.region_threads(), regression::fused_region_threads(Space()));
    k.generate_inputs(7);
    run_once(k);
    regression::Kernel<double, Space> launches(multivariate(shape.features, steps, shape.lr), "fused", n);
    launches.generate_inputs(7);
    for (Transferable* f : launches.inputs()) f->copy_to_device();
    Space space;
    launches.compute_with_launches(space);
    space.fence();
    for (Transferable* f : launches.outputs()) f->copy_to_host();
    const std::int64_t diverged_at = launches.diverged_at().host(0);
    EXPECT_EQ(k.diverged_at().host(0), diverged_at);
    EXPECT_EQ(diverged_at >= 0, shape.diverges);
    const std::int64_t compared = diverged_at >= 0 ? diverged_at + 1 : steps;
    for (std::int64_t step = 0; step < compared; ++step) {
      const double got = k.loss().host(step), want = launches.loss().host(step);
      ASSERT_NEAR(got, want, 1e-11 * std::max(1.0, std::abs(want))) << "loss of step " << step;
    }
    for (std::size_t j = 0; j < k.beta().host.extent(0); ++j) {
      const double want = launches.beta().host(j);
      EXPECT_NEAR(k.beta().host(j), want, 1e-11 * std::max(1.0, std::abs(want))) << "beta " << j;
    }
  }
}

// A signal seen by the region's first thread after a step stops every thread before the next one
// (a thread left at a barrier would hang the run): one step runs when the signal is there before
// the first.
TYPED_TEST(RegressionTest, ASignalStopsEveryThreadOfTheRegionAfterTheSameStep) {
  using Space = TypeParam;
  if constexpr (is_host_space<Space>()) {
    if (const auto reason = without_one_region<Space>()) GTEST_SKIP() << *reason;
    regression::Kernel<double, Space> k(multivariate(8, 1000, 0.02), "fused", 500);
    k.generate_inputs(3);
    for (Transferable* f : k.inputs()) f->copy_to_device();
    Space space;
    install_interrupt_handlers();
    std::raise(SIGTERM);
    EXPECT_THROW(k.compute(space), Interrupted);
    clear_interrupt_request();
    for (Transferable* f : k.outputs()) f->copy_to_host();
    EXPECT_GT(k.loss().host(0), 0.0);
    EXPECT_EQ(k.loss().host(1), 0.0) << "step 1 ran";
  } else {
    GTEST_SKIP() << space_name<Space>()
                 << " is a device: its steps are launches, between which the host looks for signals";
  }
}

// A whole fit is one harness iteration: it notices SIGTERM between its steps, within a second of
// work, instead of after the fit.
TYPED_TEST(RegressionTest, LongFitStopsPromptlyOnSigterm) {
  using Space = TypeParam;
  auto fit_until_signalled = [] {
    regression::Kernel<double, Space> k(multivariate(8, 1000000, 0.01), "fused", 2000);
    k.generate_inputs(5);
    miniapp::testing::exit_with_interruption_delay([&] { run_once(k); }, 0.1);
  };
  miniapp::testing::use_fresh_processes_for_death_tests();
  EXPECT_EXIT(fit_until_signalled(), ::testing::ExitedWithCode(0), "");
}

// Each residual is a dot product of P + 1 terms, so the loss bound grows with the row length: a
// wide model on few samples, whose residuals cancel, passes in both precisions (issue 17's deck).
TEST(RegressionDeck, WideRowsOnFewSamplesVerifyInBothPrecisions) {
  const DeckResult r = load_deck_text(
      "cases: [{workload: regression, variants: [fused, blas], sizes: 9, features: 130, iterations: 5, "
      "learning_rate: 0.01, precision: [float32, float64], spaces: [serial], policies: [host], seed: 483}]",
      "deck.yaml");
  if (!r.deck) GTEST_SKIP() << "the Serial space is not compiled in: " << format(r.diagnostics.all().front());
  const std::vector<MeasurementSpec> plan = expand(*r.deck);
  ASSERT_EQ(plan.size(), 4u);
  for (const MeasurementSpec& spec : plan) {
    const Measurement m = find_workload("regression")->run(spec, r.deck->cases.at(spec.case_index).params);
    EXPECT_TRUE(m.verification.passed) << spec.variant << " " << to_string(spec.precision) << ": "
                                       << m.verification.detail;
  }
}

TEST(RegressionReplay, SpectrumOfTheGramMatrix) {
  // [[1, 1], [1, 2]]: (3 -+ sqrt 5) / 2; a diagonal matrix keeps its entries.
  std::vector<double> lambda = regression::symmetric_eigenvalues({1, 1, 1, 2}, 2);
  std::sort(lambda.begin(), lambda.end());
  EXPECT_NEAR(lambda[0], (3 - std::sqrt(5.0)) / 2, 1e-14);
  EXPECT_NEAR(lambda[1], (3 + std::sqrt(5.0)) / 2, 1e-14);
  lambda = regression::symmetric_eigenvalues({4, 0, 0, 0, 1e-6, 0, 0, 0, 2}, 3);
  std::sort(lambda.begin(), lambda.end());
  EXPECT_DOUBLE_EQ(lambda[0], 1e-6);
  EXPECT_DOUBLE_EQ(lambda[2], 4);
}

// The Gram form's sums over the rows (X^T X, X^T y, y^T y) are what the replay steps with, so
// their rounding must not grow with N: 2^21 equal rows (x = 0.1, y = 0.3), whose exact sums are
// 2^21 times each rounded product. Added row after row they are off by some 9 x 10^4 eps;
// summed in blocks whose sums are added with their rounding carried, by about 20.
TEST(RegressionReplay, NormalEquationsOfMillionsOfEqualRowsStayWithinTensOfUlps) {
  const std::size_t n = std::size_t(1) << 21;
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> x("x", n, 2);
  Kokkos::View<double*, Kokkos::HostSpace> y("y", n);
  for (std::size_t i = 0; i < n; ++i) x(i, 0) = 0.1, x(i, 1) = 1.0, y(i) = 0.3;
  const regression::NormalEquations ne = regression::normal_equations(x, y);
  const double v = 0.1, w = 0.3, rows = static_cast<double>(n);
  const double bound = 64 * std::numeric_limits<double>::epsilon();
  auto relative = [](double got, double exact) { return std::abs(got - exact) / exact; };
  EXPECT_LE(relative(ne.gram[0], rows * (v * v)), bound) << ne.gram[0];
  EXPECT_LE(relative(ne.gram[1], rows * v), bound) << ne.gram[1];
  EXPECT_EQ(ne.gram[2], ne.gram[1]);  // the lower triangle mirrors the upper
  EXPECT_EQ(ne.gram[3], rows);        // sums of 1: exact in any order
  EXPECT_LE(relative(ne.xty[0], rows * (v * w)), bound) << ne.xty[0];
  EXPECT_LE(relative(ne.yty, rows * (w * w)), bound) << ne.yty;
}
