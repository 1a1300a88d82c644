#include <gtest/gtest.h>

#include "core/block_distribution.hpp"
#include "core/error.hpp"

using tessera::BlockDistribution;

TEST(BlockDistribution, CoversEveryRowOnceWithSizesWithinOne) {
  for (std::int64_t rows : {0, 1, 2, 7, 17, 1000}) {
    for (int p : {1, 2, 3, 4, 5, 16, 33}) {
      BlockDistribution d({rows, 3}, p);
      std::int64_t next = 0, lo = rows, hi = 0;
      for (int r = 0; r < p; ++r) {
        EXPECT_EQ(d.begin(r), next) << rows << " rows, rank " << r << " of " << p;
        EXPECT_EQ(d.end(r) - d.begin(r), d.rows(r));
        lo = std::min(lo, d.rows(r));
        hi = std::max(hi, d.rows(r));
        for (std::int64_t i = d.begin(r); i < d.end(r); ++i)
          ASSERT_EQ(d.owner(i), r) << "row " << i;
        next = d.end(r);
      }
      EXPECT_EQ(next, rows);
      EXPECT_LE(hi - lo, 1);
    }
  }
}

TEST(BlockDistribution, MoreRanksThanRowsLeavesEmptyRanks) {
  BlockDistribution d({2, 5}, 4);
  EXPECT_EQ(d.rows(0), 1);
  EXPECT_EQ(d.rows(1), 1);
  EXPECT_EQ(d.rows(2), 0);
  EXPECT_EQ(d.rows(3), 0);
  EXPECT_EQ(d.local_size(3), 0);
}

TEST(BlockDistribution, TransposedSwapsShape) {
  BlockDistribution d({17, 31}, 3);
  EXPECT_EQ(d.transposed().global(), (tessera::Shape{31, 17}));
  EXPECT_EQ(d.transposed().nranks(), 3);
}

TEST(BlockDistribution, RejectsZeroRanks) {
  EXPECT_THROW(BlockDistribution({3, 3}, 0), tessera::InputError);
}
