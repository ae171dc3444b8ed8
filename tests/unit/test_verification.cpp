#include "miniapp/core/sampling.hpp"
#include "miniapp/core/verification.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

using namespace miniapp;

TEST(EvenSample, AllIndicesUpToTheWantedCountThenAnEvenSpreadWithBothEnds) {
  EXPECT_EQ(even_sample(5, 8), (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(even_sample(5, 5), (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(even_sample(101, 5), (std::vector<std::size_t>{0, 25, 50, 75, 100}));
  EXPECT_EQ(even_sample(7, 1), (std::vector<std::size_t>{0}));
  EXPECT_TRUE(even_sample(7, 0).empty());
  EXPECT_TRUE(even_sample(0, 4).empty());
  // Evenly spaced for every size: no run of consecutive indices where the total is just above
  // the wanted count.
  const auto picked = even_sample(6000, 4096);
  ASSERT_EQ(picked.size(), 4096u);
  EXPECT_EQ(picked.back(), 5999u);
  for (std::size_t s = 1; s < picked.size(); ++s) {
    ASSERT_GE(picked[s] - picked[s - 1], 1u);
    ASSERT_LE(picked[s] - picked[s - 1], 2u);
  }
}

TEST(ErrorTally, CountsFailuresAndNamesTheFirstAtFullPrecision) {
  ErrorTally tally(1e-6);
  EXPECT_TRUE(tally.compare(1.0 + 1e-8, 1.0, 1.0, [] { return "v(0)"; }));
  EXPECT_FALSE(tally.compare(0.1234567890123456, 0.12, 1.0, [] { return "v(1)"; }));
  EXPECT_FALSE(tally.compare(3.0, 2.0, 1.0, [] { return std::string("v(2)"); }));
  EXPECT_EQ(tally.compared(), 3u);
  EXPECT_EQ(tally.failures(), 2u);
  EXPECT_EQ(tally.first_failure(), "v(1) = 0.12345678901234559, reference 0.12");
  EXPECT_DOUBLE_EQ(tally.max_abs_error(), 1.0);
  const Verification v = tally.result("host loops", "3 values checked");
  EXPECT_TRUE(v.checked);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.detail, "3 values checked; 2 wrong, first v(1) = 0.12345678901234559, reference 0.12");
  EXPECT_EQ(v.reference, "host loops");
  EXPECT_DOUBLE_EQ(v.tolerance, 1e-6);
}

TEST(ErrorTally, ANaNIsTheWorstErrorAndFails) {
  ErrorTally tally(1e-3);
  EXPECT_FALSE(tally.compare(std::nan(""), 1.0, 1.0, [] { return "x"; }));
  EXPECT_TRUE(std::isinf(tally.max_rel_error()));
  EXPECT_TRUE(std::isinf(tally.max_abs_error()));
  // A NaN reference fails too: nothing is within a bound of it.
  ErrorTally other(1e-3);
  EXPECT_FALSE(other.compare(1.0, std::nan(""), 1.0, [] { return "y"; }));
}

TEST(ErrorTally, PerValueBoundsAndFailuresWithoutAReference) {
  ErrorTally tally(1e-12);
  EXPECT_TRUE(tally.compare(1.001, 1.0, 1.0, 1e-2, [] { return "loose"; }));
  EXPECT_FALSE(tally.compare(1.001, 1.0, 1.0, [] { return "tight"; }));
  tally.fail([] { return std::string("index(4) = 4 is not another point"); });
  EXPECT_EQ(tally.failures(), 2u);
  EXPECT_EQ(tally.failure_summary("problems"), "; 2 problems, first tight = 1.0009999999999999, reference 1");
}
