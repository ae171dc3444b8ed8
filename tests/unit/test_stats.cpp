#include "miniapp/core/stats.hpp"

#include <gtest/gtest.h>

using miniapp::summarize;

TEST(Stats, OddCountTakesMiddleValue) {
  const auto s = summarize({5.0, 1.0, 3.0});
  EXPECT_EQ(s.count, 3u);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.stddev, 2.0);  // sample standard deviation of {1, 3, 5}
}

TEST(Stats, EvenCountAveragesMiddlePair) {
  const auto s = summarize({4.0, 1.0, 2.0, 3.0});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
}

TEST(Stats, SingleSampleHasNoSpread) {
  const auto s = summarize({7.0});
  EXPECT_DOUBLE_EQ(s.median, 7.0);
  EXPECT_DOUBLE_EQ(s.stddev, 0.0);
}

TEST(Stats, EmptyIsAllZero) {
  const auto s = summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_DOUBLE_EQ(s.mean, 0.0);
}
