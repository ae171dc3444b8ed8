#include "miniapp/core/random.hpp"

#include <gtest/gtest.h>

#include <set>

using miniapp::uniform01;

TEST(Random, ValuesLieInUnitInterval) {
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const double u = uniform01(7, i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Random, SameSeedAndIndexGiveSameValue) { EXPECT_EQ(uniform01(42, 12345), uniform01(42, 12345)); }

TEST(Random, SeedsAndIndicesGiveDistinctStreams) {
  std::set<double> seen;
  for (std::uint64_t seed = 0; seed < 10; ++seed)
    for (std::uint64_t i = 0; i < 1000; ++i) seen.insert(uniform01(seed, i));
  EXPECT_EQ(seen.size(), 10000u);
}

TEST(Random, MeanAndVarianceMatchUniform) {
  const int n = 200000;
  double sum = 0, sum2 = 0;
  for (int i = 0; i < n; ++i) {
    const double u = uniform01(3, static_cast<std::uint64_t>(i));
    sum += u;
    sum2 += u * u;
  }
  const double mean = sum / n, var = sum2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.5, 0.005);
  EXPECT_NEAR(var, 1.0 / 12.0, 0.002);
}
