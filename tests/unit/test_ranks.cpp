// How a problem is split across MPI ranks, and the one-process case every run without a launcher
// is (the MPI job itself: tests/mpi/).
#include "miniapp/core/ranks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace miniapp;

TEST(RankSlice, PartsFollowEachOtherCoverEveryItemAndDifferByAtMostOne) {
  for (std::size_t items : {0u, 1u, 2u, 7u, 301u, 1000u})
    for (int count : {1, 2, 3, 4, 8}) {
      std::size_t next = 0, smallest = items, largest = 0;
      for (int rank = 0; rank < count; ++rank) {
        const auto [begin, end] = ranks::Slice{rank, count}.range(items);
        EXPECT_EQ(begin, next) << items << " items, rank " << rank << " of " << count;
        ASSERT_LE(begin, end);
        smallest = std::min(smallest, end - begin);
        largest = std::max(largest, end - begin);
        next = end;
      }
      EXPECT_EQ(next, items) << items << " items over " << count << " ranks";
      EXPECT_LE(largest - smallest, 1u) << items << " items over " << count << " ranks";
    }
  // The first ranks hold the extra items.
  const ranks::Slice first{0, 2}, second{1, 2};
  EXPECT_EQ(first.range(301).first, 0u);
  EXPECT_EQ(first.range(301).second, 151u);
  EXPECT_EQ(second.range(301).first, 151u);
  EXPECT_EQ(second.range(301).second, 301u);
}

TEST(Ranks, WithoutALauncherThisProcessIsTheOneRankAndCollectivesReturnTheirInput) {
  EXPECT_EQ(ranks::rank(), 0);
  EXPECT_EQ(ranks::count(), 1);
  EXPECT_TRUE(ranks::is_root());
  EXPECT_EQ(ranks::launcher(), "");
  EXPECT_EQ(ranks::local_rank(), 0);
  EXPECT_TRUE(ranks::any(true));
  EXPECT_FALSE(ranks::any(false));
  EXPECT_EQ(ranks::max(5), 5);
  std::vector<double> v = {1.5, -2};
  ranks::max_in_place(v);
  ranks::sum_in_place(v);
  EXPECT_EQ(v, (std::vector<double>{1.5, -2}));
  EXPECT_EQ(ranks::gather("x"), std::vector<std::string>{"x"});
  EXPECT_EQ(ranks::broadcast("y", 0), "y");
}
