// Run as two MPI ranks (tests/CMakeLists.txt: mpirun -np 2): the collectives, how a measurement of
// every rank becomes one, how an error or a signal on one rank ends the run on both without a hang
// (ctest's timeout bounds it), the distance, solver and elementwise splits across the ranks, equal
// to the whole problem bit for bit, and the regression's rows split with its sums added over the
// ranks every step, equal to the whole fit within the rounding of the sums' order.

#include "miniapp/commands/run/runner.hpp"
#include "miniapp/core/exit_codes.hpp"
#include "miniapp/core/interrupt.hpp"
#include "miniapp/core/ranks.hpp"
#include "miniapp/workloads/distance/problem.hpp"
#include "miniapp/workloads/matrix/matrix.hpp"
#include "miniapp/workloads/regression/problem.hpp"
#include "miniapp/workloads/solver/problem.hpp"

#include "../common/stand_in_plan.hpp"
#include "../unit/kernel_helpers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <any>
#include <cmath>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

using namespace miniapp;

namespace {

const int kRanks = 2;

TEST(Ranks, TheLauncherStartedTwoRanksOfOneNode) {
  ASSERT_TRUE(ranks::compiled());
  ASSERT_EQ(ranks::count(), kRanks) << "run these tests with mpirun -np " << kRanks;
  EXPECT_FALSE(ranks::launcher().empty());
  EXPECT_EQ(ranks::local_rank(), ranks::rank());
}

TEST(Ranks, CollectivesCombineEveryRank) {
  const int r = ranks::rank();
  std::vector<double> max = {double(r), -double(r)}, min = max, sum = max;
  ranks::max_in_place(max);
  ranks::min_in_place(min);
  ranks::sum_in_place(sum);
  EXPECT_EQ(max, (std::vector<double>{1, 0}));
  EXPECT_EQ(min, (std::vector<double>{0, -1}));
  EXPECT_EQ(sum, (std::vector<double>{1, -1}));
  EXPECT_EQ(ranks::max(10 * r), 10);
  EXPECT_TRUE(ranks::any(r == 1));
  EXPECT_FALSE(ranks::any(false));
  EXPECT_EQ(ranks::broadcast("from rank " + std::to_string(r), 1), "from rank 1");
  // Texts of different lengths, one of them empty, come back whole and in rank order.
  const std::vector<std::string> gathered = ranks::gather(r == 0 ? "" : "rank one\there");
  if (r == 0) EXPECT_EQ(gathered, (std::vector<std::string>{"", "rank one\there"}));
  else EXPECT_TRUE(gathered.empty());
}

Measurement rank_measurement(bool passed) {
  const int r = ranks::rank();
  Measurement m;
  m.seconds.compute = {1.0 + r, 2.0 - r};
  m.seconds.total = m.seconds.compute;
  m.seconds.generate = 0.5 * (r + 1);
  m.work.flops = 10.0 * (r + 1);
  m.bytes_one_time = 100;
  m.verification.checked = true;
  m.verification.passed = passed;
  m.verification.max_rel_error = 0.1 * (r + 1);
  m.verification.detail = "part " + std::to_string(r);
  return m;
}

TEST(Ranks, AMeasurementIsTheSlowestRanksWithTheWorkOfAll) {
  const Measurement m = combine_over_ranks(rank_measurement(true));
  EXPECT_EQ(m.seconds.compute, (std::vector<double>{2.0, 2.0}));
  EXPECT_EQ(m.seconds.generate, 1.0);
  EXPECT_EQ(m.work.flops, 30.0);
  EXPECT_EQ(m.bytes_one_time, 200u);
  EXPECT_TRUE(m.verification.passed);
  EXPECT_DOUBLE_EQ(m.verification.max_rel_error, 0.2);
  EXPECT_EQ(m.verification.detail, "2 ranks, each checking its own part; rank 0: part 0");
}

TEST(Ranks, TheSpreadOfTheRanksMediansIsKept) {
  Measurement mine;
  const double r = ranks::rank();
  mine.seconds.compute = {1.0 + 2 * r, 5.0, 1.0 + 2 * r};  // medians 1 and 3
  mine.seconds.total = {4.0 + r, 4.0 + r, 9.0};             // medians 4 and 5
  const Measurement m = combine_over_ranks(mine);
  ASSERT_TRUE(m.rank_spread);
  EXPECT_EQ(m.rank_spread->ranks, 2);
  EXPECT_EQ(m.rank_spread->compute.min, 1.0);
  EXPECT_EQ(m.rank_spread->compute.mean, 2.0);
  EXPECT_EQ(m.rank_spread->compute.max, 3.0);
  EXPECT_EQ(m.rank_spread->total.min, 4.0);
  EXPECT_EQ(m.rank_spread->total.mean, 4.5);
  EXPECT_EQ(m.rank_spread->total.max, 5.0);
  // The samples themselves are the slowest rank's, iteration by iteration.
  EXPECT_EQ(m.seconds.compute, (std::vector<double>{3.0, 5.0, 3.0}));
}

TEST(Ranks, OneRanksFailedVerificationFailsTheMeasurementOnEvery) {
  const Measurement m = combine_over_ranks(rank_measurement(ranks::rank() == 0));
  EXPECT_FALSE(m.verification.passed);
  EXPECT_EQ(m.verification.detail, "2 ranks, each checking its own part; rank 1: part 1");
}

// A plan of three measurements of a stand-in workload, run by the real run loop on both ranks.
struct PlanRun {
  Deck deck;
  RunRecord record;
  std::vector<MeasurementSpec> plan;
  int saves = 0;
  PlanRun() : deck(miniapp::testing::one_case_deck()), plan(miniapp::testing::stand_in_plan(3, kRanks)) {
    record.deck = &deck;
    install_interrupt_handlers();
    clear_interrupt_request();
  }
  int run(const MeasureFunction& measure) {
    return run_plan(plan, record, measure, [&](const RunRecord&) { ++saves; }, true);
  }
};

TEST(Ranks, AnErrorOnOneRankEndsTheRunOnEveryRank) {
  PlanRun run;
  const int code = run.run([](const MeasurementSpec& spec) {
    if (spec.size == 11 && ranks::rank() == 1) throw std::runtime_error("cannot allocate");
    return rank_measurement(true);
  });
  EXPECT_EQ(code, exit_code::kRuntimeError);
  EXPECT_EQ(run.record.status, "failed");
  EXPECT_EQ(run.record.error, "rank 1: cannot allocate");
  EXPECT_EQ(run.record.measurements.size(), 1u);
  // Rank 0 alone saves: at the start, after the one finished measurement, and at the end.
  EXPECT_EQ(run.saves, ranks::rank() == 0 ? 3 : 0);
}

TEST(Ranks, ASignalToOneRankStopsEveryRank) {
  PlanRun run;
  const int code = run.run([](const MeasurementSpec& spec) {
    if (spec.size == 11 && ranks::rank() == 0) std::raise(SIGTERM);
    return rank_measurement(true);
  });
  EXPECT_EQ(code, exit_code::kInterruptedBase + SIGTERM);
  EXPECT_EQ(run.record.status, "interrupted");
  // The measurement during which the signal came finished and is kept; the third never started.
  EXPECT_EQ(run.record.measurements.size(), 2u);
  clear_interrupt_request();
}

TEST(Ranks, AllRanksFinishingMakesOneCompleteRun) {
  PlanRun run;
  const int code = run.run([](const MeasurementSpec&) { return rank_measurement(true); });
  EXPECT_EQ(code, exit_code::kAllVerified);
  EXPECT_EQ(run.record.status, "complete");
  EXPECT_EQ(run.record.measurements.size(), 3u);
}

// The bytes of a Field's host mirror, first index slowest whatever the layout, so the parts of a
// split (along the first index) concatenate to the whole.
template <class F>
std::string bytes_of(const F& field) {
  const auto& v = field.host;
  using T = typename std::decay_t<decltype(v)>::non_const_value_type;
  constexpr std::size_t rank = std::decay_t<decltype(v)>::rank;
  std::string out;
  auto put = [&](const T& x) { out.append(reinterpret_cast<const char*>(&x), sizeof(T)); };
  for (std::size_t i = 0; i < v.extent(0); ++i) {
    if constexpr (rank == 1) {
      put(v(i));
    } else {
      for (std::size_t j = 0; j < v.extent(1); ++j) {
        if constexpr (rank == 2) put(v(i, j));
        else
          for (std::size_t k = 0; k < v.extent(2); ++k) put(v(i, j, k));
      }
    }
  }
  return out;
}

// One computation, inputs in and outputs back (the kernel_helpers' run_once, for any kernel
// class, KernelChoice included).
template <class Space, class K>
void run_once_on(K& k) {
  for (Transferable* f : k.inputs()) f->copy_to_device();
  Space space;
  k.compute(space);
  space.fence();
  for (Transferable* f : k.outputs()) f->copy_to_host();
}

// The whole problem's kernel and this rank's part of it, each generated from `seed` and computed
// once.
template <class Space, class K>
void generate_and_run(std::uint64_t seed, K& whole, K& part) {
  for (K* k : {&whole, &part}) {
    k->generate_inputs(seed);
    run_once_on<Space>(*k);
  }
}

// The ranks' parts in rank order are `whole`, byte for byte (a collective: every rank calls it).
void expect_parts_make_whole(const std::string& mine, const std::string& whole, const std::string& what) {
  const std::vector<std::string> parts = ranks::gather(mine);
  if (ranks::rank() == 0) EXPECT_TRUE(parts[0] + parts[1] == whole) << what << " differ";
}

// The row outputs of distance, split across the ranks: each rank's part verifies, and the parts
// in rank order are the whole problem's outputs bit for bit, on every compiled space.
template <class Scalar, class Space>
void check_distance_rows(distance::Output output, const std::string& variant, std::size_t n) {
  distance::Params p;
  p.dim = 5;
  p.output = output;
  distance::Kernel<Scalar, Space> whole(p, variant, n), part(p, variant, n, ranks::this_slice());
  generate_and_run<Space>(7, whole, part);
  const auto [begin, end] = part.own_row_range();
  EXPECT_EQ(begin, ranks::rank() == 0 ? 0u : (n + 1) / 2);
  EXPECT_EQ(end, ranks::rank() == 0 ? (n + 1) / 2 : n);
  const Verification v = part.verify(std::nullopt);
  EXPECT_TRUE(v.passed) << v.detail;
  const std::string description = std::string(Space::name()) + " " + variant + " " + to_string(output) + ": ";
  auto compare = [&](const std::string& mine, const std::string& all, const char* what) {
    expect_parts_make_whole(mine, all, description + what);
  };
  if (output == distance::Output::RowMin) {
    compare(bytes_of(part.nearest()), bytes_of(whole.nearest()), "nearest distances");
    compare(bytes_of(part.nearest_index()), bytes_of(whole.nearest_index()), "nearest indices");
  } else {
    compare(bytes_of(part.row_sums()), bytes_of(whole.row_sums()), "row sums");
  }
}

TEST(DistanceSplit, TheRanksRowsAreTheWholeProblemsBitForBit) {
  for_each_type(TestedSpaces{}, [](auto tag) {
    using Space = typename decltype(tag)::type;
    for (distance::Output output : {distance::Output::RowMin, distance::Output::RowSum}) {
      // An odd N: rank 0 holds one row more.
      check_distance_rows<float, Space>(output, "direct", 301);
      check_distance_rows<double, Space>(output, "direct", 301);
    }
  });
}

// The batched solves split across the ranks: each rank's systems verify (named by their place in
// the whole batch), and the solutions and pivot flags in rank order are the whole batch's.
template <class Scalar, class Space>
void check_solver_systems(const std::string& variant, std::size_t n) {
  solver::Params p;
  p.systems = 301;
  solver::Kernel<Scalar, Space> whole(p, variant, n), part(p, variant, n, ranks::this_slice());
  generate_and_run<Space>(11, whole, part);
  const Verification v = part.verify(std::nullopt);
  EXPECT_TRUE(v.passed) << v.detail;
  const std::string description = std::string(Space::name()) + " " + variant + " n " + std::to_string(n) + ": ";
  auto compare = [&](const std::string& mine, const std::string& all, const char* what) {
    expect_parts_make_whole(mine, all, description + what);
  };
  // The inputs too: a rank's systems are generated as the whole batch's.
  compare(bytes_of(part.matrices()), bytes_of(whole.matrices()), "matrices");
  compare(bytes_of(part.solutions()), bytes_of(whole.solutions()), "solutions");
  compare(bytes_of(part.info()), bytes_of(whole.info()), "pivot flags");
}

TEST(SolverSplit, TheRanksSystemsAreTheWholeBatchsBitForBit) {
  for_each_type(TestedSpaces{}, [](auto tag) {
    using Space = typename decltype(tag)::type;
    for (const char* variant : {"batched-thread", "batched-team"}) {
      check_solver_systems<float, Space>(variant, 8);
      check_solver_systems<double, Space>(variant, 12);
    }
  });
}

TEST(SolverSplit, TheDenseVariantsAreRefusedOnMoreThanOneRank) {
  solver::Params p;
  EXPECT_THROW((solver::Kernel<double, FirstCompiledSpace>(p, "dense-blocked", 16, ranks::this_slice())),
               std::invalid_argument);
}

// The bytes of a Field's host mirror in memory order: the elementwise form splits its arrays'
// memory, whatever their layout.
template <class F>
std::string span_bytes(const F& field) {
  return std::string(reinterpret_cast<const char*>(field.host.data()), field.host.span() * sizeof(*field.host.data()));
}

template <class Scalar, class Space>
void check_elementwise(matrix::Operation op) {
  matrix::Params p;
  p.rows = 3;  // 3 x 1001 elements: the ranks hold 1502 and 1501, across a row boundary
  p.op = op;
  typename matrix::MatrixWorkload::template Kernel<Scalar, Space> whole(p, "elementwise", 1001), part(p, "elementwise", 1001, ranks::this_slice());
  generate_and_run<Space>(5, whole, part);
  const Verification v = part.verify(std::nullopt);
  EXPECT_TRUE(v.passed) << v.detail;
  auto& mine = part.template get<matrix::Elementwise<Scalar, Space>>();
  auto& all = whole.template get<matrix::Elementwise<Scalar, Space>>();
  EXPECT_EQ(mine.own_elements().first, ranks::rank() == 0 ? 0u : 1502u);
  for (auto [a, b, what] : {std::make_tuple(&mine.x(), &all.x(), "x"), std::make_tuple(&mine.y(), &all.y(), "y"),
                            std::make_tuple(&mine.z(), &all.z(), "z")}) {
    expect_parts_make_whole(span_bytes(*a), span_bytes(*b), std::string(Space::name()) + ": " + what);
  }
}

TEST(MatrixSplit, TheRanksElementsAreTheWholeArraysBitForBit) {
  for_each_type(TestedSpaces{}, [](auto tag) {
    using Space = typename decltype(tag)::type;
    for (matrix::Operation op : {matrix::Operation::Power, matrix::Operation::Multiply}) {
      check_elementwise<float, Space>(op);
      check_elementwise<double, Space>(op);
    }
  });
}

// GEMM by row panels: each rank's rows of A, C0 and C and the whole B, generated as in the whole
// product; each panel verifies, and the panels of C in rank order are the whole product's bit for
// bit (the same kernel on the same rows; the vendor BLAS behind gemm-kokkos-kernels may block a
// panel of other height differently, so its C is held to verification only).
template <class Scalar, class Space>
void check_gemm(const std::string& variant, std::size_t m, std::size_t n, std::size_t k) {
  matrix::Params p;
  p.m = m, p.n = n, p.k = k;
  p.alpha = 1.5;
  p.beta = -0.5;  // C0 read, and split like C
  typename matrix::MatrixWorkload::template Kernel<Scalar, Space> whole(p, variant, 0),
      part(p, variant, 0, ranks::this_slice());
  generate_and_run<Space>(9, whole, part);
  const Verification v = part.verify(std::nullopt);
  const std::string description = std::string(Space::name()) + " " + variant;
  EXPECT_TRUE(v.passed) << description << ": " << v.detail;
  auto& mine = part.template get<matrix::Gemm<Scalar, Space>>();
  auto& all = whole.template get<matrix::Gemm<Scalar, Space>>();
  EXPECT_EQ(mine.first_row(), ranks::rank() == 0 ? 0u : (m + 1) / 2) << description;
  EXPECT_EQ(mine.shape().m, ranks::rank() == 0 ? (m + 1) / 2 : m / 2) << description;
  EXPECT_EQ(bytes_of(mine.b()), bytes_of(all.b())) << description << ": B differs";
  const bool exact = variant != "gemm-kokkos-kernels";
  for (auto [a, b, what] : {std::make_tuple(&mine.a(), &all.a(), "A"), std::make_tuple(&mine.c0(), &all.c0(), "C0"),
                            std::make_tuple(&mine.c(), exact ? &all.c() : &mine.c(), "C")}) {
    if (a == b) continue;
    expect_parts_make_whole(bytes_of(*a), bytes_of(*b), description + ": " + what);
  }
}

TEST(MatrixSplit, TheRanksRowPanelsAreTheWholeProductBitForBit) {
  std::vector<std::string> variants = {"gemm-naive", "gemm-tiled"};
  if (compat::kHasKokkosKernels) variants.push_back("gemm-kokkos-kernels");
  for_each_type(TestedSpaces{}, [&](auto tag) {
    using Space = typename decltype(tag)::type;
    for (const std::string& variant : variants) {
      // An odd M (rank 0 holds a row more), N and K off every tile size.
      check_gemm<float, Space>(variant, 67, 45, 38);
      check_gemm<double, Space>(variant, 67, 45, 38);
    }
  });
}

// The distance matrix by rows: each rank's rows verify (their structure where its rows suffice),
// and in rank order they are the whole matrix bit for bit, whole or streamed to the host in
// blocks (for the kernels that compute each entry alone: the symmetric variant computes a rank's
// entries directly, and the gemm form's vendor product may block a panel of other height
// differently, so both are held to verification only).
template <class Scalar, class Space>
void check_distance_matrix(const std::string& variant, std::size_t n, std::optional<std::size_t> chunk_rows) {
  distance::Params p;
  p.dim = 3;
  p.chunk_rows = chunk_rows;
  distance::Kernel<Scalar, Space> whole(p, variant, n), part(p, variant, n, ranks::this_slice());
  generate_and_run<Space>(13, whole, part);
  const std::string description = std::string(Space::name()) + " " + variant + (chunk_rows ? " chunked" : "");
  EXPECT_EQ(part.block_plan().chunked, chunk_rows.has_value()) << description;
  const Verification v = part.verify(std::nullopt);
  EXPECT_TRUE(v.passed) << description << ": " << v.detail;
  const auto mine = part.matrix_host();
  EXPECT_EQ(mine.extent(0), ranks::rank() == 0 ? (n + 1) / 2 : n / 2) << description;
  EXPECT_EQ(mine.extent(1), n) << description;
  if (variant == "symmetric" || variant == "gemm") return;
  const auto all = whole.matrix_host();
  auto bytes = [](const auto& matrix) {
    return std::string(reinterpret_cast<const char*>(matrix.data()), matrix.span() * sizeof(Scalar));
  };
  expect_parts_make_whole(bytes(mine), bytes(all), description + ": the matrices");
}

TEST(DistanceSplit, TheRanksRowsOfTheMatrixAreTheWholeMatrixBitForBit) {
  std::vector<std::string> variants = {"direct", "tiled", "symmetric"};
  if (compat::kHasKokkosKernels) variants.push_back("gemm");
  for_each_type(TestedSpaces{}, [&](auto tag) {
    using Space = typename decltype(tag)::type;
    for (const std::string& variant : variants) {
      check_distance_matrix<float, Space>(variant, 201, std::nullopt);
      check_distance_matrix<double, Space>(variant, 201, std::nullopt);
      check_distance_matrix<double, Space>(variant, 201, std::size_t(17));  // blocks of 17 rows, the last short
    }
  });
}

TEST(DistanceSplit, MoreRanksThanRowsAreRefused) {
  const Workload* w = find_workload("distance");
  ASSERT_NE(w, nullptr);
  MeasurementSpec spec;
  spec.workload = "distance";
  spec.variant = "direct";
  spec.size = 1;
  spec.ranks = kRanks;
  const auto why = w->refuse(spec, std::any(distance::Params{}));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("fewer rows than ranks"), std::string::npos) << *why;
}

// The regression's rows split across the ranks, the step's sums added over them: the ranks'
// rows are the whole problem's bit for bit, every rank ends with the same beta (bit for bit), the
// fit verifies on every rank, and it equals the whole problem's fit within the rounding of a
// different order of the sums (coefficient_tolerance, what verification allows for the rounding
// of the steps themselves).
regression::Params fit_params(int features, int iterations) {
  regression::Params p;
  p.features = features;
  p.iterations = iterations;
  return p;
}

template <class Scalar, class Space>
void check_regression(const std::string& variant, int features, std::size_t n) {
  const regression::Params p = fit_params(features, 300);
  regression::Kernel<Scalar, Space> whole(p, variant, n), part(p, variant, n, ranks::this_slice());
  generate_and_run<Space>(3, whole, part);
  const std::string description =
      std::string(Space::name()) + " " + variant + " " + std::to_string(features) + " features, N " + std::to_string(n);
  EXPECT_EQ(part.own_row_range().first, ranks::rank() == 0 ? 0u : (n + 1) / 2) << description;
  expect_parts_make_whole(bytes_of(part.x()), bytes_of(whole.x()), description + ": X");
  expect_parts_make_whole(bytes_of(part.y()), bytes_of(whole.y()), description + ": y");
  const std::string beta = bytes_of(part.beta());
  EXPECT_EQ(ranks::broadcast(beta, 0), beta) << description << ": the ranks' beta differ";
  const Verification v = part.verify(std::nullopt);
  EXPECT_TRUE(v.passed) << description << ": " << v.detail;
  double scale = 1.0, gap = 0.0;
  for (std::size_t j = 0; j < whole.beta().host.extent(0); ++j) {
    scale = std::max(scale, std::abs(double(whole.beta().host(j))));
    gap = std::max(gap, std::abs(double(part.beta().host(j)) - double(whole.beta().host(j))));
  }
  EXPECT_LE(gap, regression::coefficient_tolerance<Scalar>(double(p.iterations), n) * scale) << description;
  // The whole fit's verification on one rank and the split's agree on what was checked.
  const Verification w = whole.verify(std::nullopt);
  EXPECT_TRUE(w.passed) << description << ": " << w.detail;
}

TEST(RegressionSplit, TheRanksFitIsTheWholeProblemsWithinTheRoundingOfTheSums) {
  std::vector<std::string> variants = {"fused"};
  if (compat::kHasKokkosKernels) variants.push_back("blas");
  for_each_type(TestedSpaces{}, [&](auto tag) {
    using Space = typename decltype(tag)::type;
    for (const std::string& variant : variants) {
      // The single-variable model (its x are strata of the whole N) and a multivariate one, an odd
      // N: rank 0 holds one row more.
      check_regression<float, Space>(variant, 0, 4001);
      check_regression<double, Space>(variant, 0, 4001);
      check_regression<double, Space>(variant, 6, 3001);
    }
  });
}

TEST(RegressionSplit, ASignalToOneRankStopsTheFitOnEveryRankAtTheSameStep) {
  using Space = FirstCompiledSpace;  // compiled in every build (MINIAPP_ONLY_SPACES)
  regression::Kernel<double, Space> part(fit_params(3, 50), "fused", 1000, ranks::this_slice());
  ASSERT_TRUE(part.exchanges_during_compute());
  part.generate_inputs(3);
  install_interrupt_handlers();
  clear_interrupt_request();
  if (ranks::rank() == 1) std::raise(SIGTERM);
  EXPECT_THROW(part.compute(Space()), Interrupted);
  clear_interrupt_request();
  // Both ranks left the fit at the same step: the next collective pairs with the other rank's.
  EXPECT_EQ(ranks::max(1 + ranks::rank()), kRanks);
}

TEST(RegressionSplit, TheExchangeIsItsOwnPhaseOfCompute) {
  using Space = FirstCompiledSpace;  // compiled in every build (MINIAPP_ONLY_SPACES)
  const regression::Params p = fit_params(4, 100);
  regression::Kernel<double, Space> part(p, "fused", 5000, ranks::this_slice());
  MeasurementSpec spec;
  spec.workload = "regression";
  spec.variant = "fused";
  spec.size = 5000;
  spec.precision = Precision::Float64;
  spec.ranks = kRanks;
  spec.repetitions = 3;
  const Measurement m = combine_over_ranks(measure(part, Space(), spec));
  ASSERT_EQ(m.seconds.communicate.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_GT(m.seconds.communicate[i], 0.0);
    EXPECT_LE(m.seconds.communicate[i], m.seconds.compute[i]);
  }
  EXPECT_TRUE(m.verification.passed) << m.verification.detail;
  // A kernel that exchanges nothing has no such phase.
  regression::Kernel<double, Space> whole(p, "fused", 5000);
  spec.ranks = 1;
  EXPECT_FALSE(whole.exchanges_during_compute());
  EXPECT_TRUE(measure(whole, Space(), spec).seconds.communicate.empty());
}

}  // namespace
