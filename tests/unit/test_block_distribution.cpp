#include <gtest/gtest.h>

#include "core/aligned_part.hpp"
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

// The per-thread column ranges of the streamed line solves: in order, covering [0, n) once,
// every inner bound on a multiple of the block, block counts within one of each other.
TEST(AlignedPart, CoversTheRangeInOrderOnBlockBounds) {
  for (std::int64_t n : {0, 1, 7, 8, 9, 63, 64, 4096, 4097}) {
    for (std::int64_t align : {1, 8}) {
      for (std::int64_t parts : {1, 2, 3, 16}) {
        std::int64_t next = 0, lo = n, hi = 0;
        for (std::int64_t p = 0; p < parts; ++p) {
          const tessera::IndexRange r = tessera::aligned_part(n, align, p, parts);
          EXPECT_EQ(r.first, next) << n << " / " << parts << " part " << p;
          EXPECT_GE(r.size(), 0);
          EXPECT_TRUE(r.end == n || r.end % align == 0) << n << " part " << p;
          const std::int64_t blocks = (r.size() + align - 1) / align;
          lo = std::min(lo, blocks);
          hi = std::max(hi, blocks);
          next = r.end;
        }
        EXPECT_EQ(next, n) << n << " / " << parts;
        EXPECT_LE(hi - lo, 1) << n << " / " << parts;
      }
    }
  }
}
