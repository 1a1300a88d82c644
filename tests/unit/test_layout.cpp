// Layouts against the formulas they stand for: ScaLAPACK's block-cyclic indexing (numroc and
// the local index of a global one), even row/column/2-D blocks, general grids, windows and
// transposed views.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <tessera/error.hpp>
#include <tessera/layout.hpp>

namespace {

using tessera::BlockCyclicSpec;
using tessera::GridOrder;
using tessera::Layout;
using tessera::Shape;
using tessera::StorageOrder;

// ScaLAPACK's NUMROC: how many of n rows (block nb) grid row p of np holds, the first at isrc.
std::int64_t numroc_formula(std::int64_t n, std::int64_t nb, int p, int isrc, int np) {
  const std::int64_t blocks = n / nb;
  const int dist = (np + p - isrc) % np;
  std::int64_t count = (blocks / np) * nb;
  const std::int64_t extra = blocks % np;
  if (dist < extra)
    count += nb;
  else if (dist == extra)
    count += n % nb;
  return count;
}

TEST(Layout, BlockCyclicMatchesScalapackIndexing) {
  for (auto [m, n, mb, nb, pr, pc, rsrc, csrc] :
       std::vector<std::tuple<int, int, int, int, int, int, int, int>>{
           {10, 7, 3, 2, 2, 3, 1, 2},
           {1, 1, 1, 1, 1, 1, 0, 0},
           {17, 5, 64, 1, 3, 2, 2, 0},
           {33, 29, 5, 7, 2, 2, 0, 1}}) {
    for (GridOrder order : {GridOrder::RowMajor, GridOrder::ColMajor}) {
      BlockCyclicSpec s;
      s.global = {m, n};
      s.mb = mb;
      s.nb = nb;
      s.pr = pr;
      s.pc = pc;
      s.rsrc = rsrc;
      s.csrc = csrc;
      s.grid_order = order;
      const Layout l = Layout::block_cyclic(s);
      auto rank_of = [&](int p, int q) {
        return order == GridOrder::RowMajor ? p * pc + q : q * pr + p;
      };
      for (int p = 0; p < pr; ++p)
        for (int q = 0; q < pc; ++q) {
          const std::int64_t rows = numroc_formula(m, mb, p, rsrc, pr);
          const std::int64_t cols = numroc_formula(n, nb, q, csrc, pc);
          const Shape local = l.local_shape(rank_of(p, q));
          EXPECT_EQ(local.size(), rows * cols);
          if (rows * cols > 0) {
            EXPECT_EQ(local, (Shape{rows, cols}));
          }
        }
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          const int p = (i / mb + rsrc) % pr, q = (j / nb + csrc) % pc;
          const auto idx = l.local_index(i, j);
          EXPECT_EQ(idx.rank, rank_of(p, q));
          EXPECT_EQ(idx.row, (i / mb) / pr * mb + i % mb);
          EXPECT_EQ(idx.col, (j / nb) / pc * nb + j % nb);
        }
    }
  }
}

TEST(Layout, FromScalapackDescriptor) {
  const int desc[9] = {1, 0, 9, 8, 2, 3, 1, 0, 11};
  const Layout l = Layout::from_scalapack(desc, 2, 2, 5);
  EXPECT_EQ(l.global(), (Shape{9, 8}));
  EXPECT_EQ(l.nranks(), 5);
  EXPECT_EQ(l.storage(), StorageOrder::ColMajor);
  EXPECT_EQ(l.leading_dimension(0), 11);
  EXPECT_EQ(l.local_shape(4).size(), 0);
  // Row 0 is in grid row rsrc = 1.
  EXPECT_EQ(l.owner(0, 0), 2);
  EXPECT_EQ(l.local_offset(2, 1, 4), 4 * 11 + 1);
  const int bad[9] = {2, 0, 9, 8, 2, 3, 1, 0, 11};
  EXPECT_THROW(Layout::from_scalapack(bad, 2, 2, 4), tessera::InputError);
}

TEST(Layout, RowColumnAnd2dBlocks) {
  const Layout rows = Layout::row_blocks({5, 3}, 3);
  EXPECT_EQ(rows.local_shape(0), (Shape{2, 3}));
  EXPECT_EQ(rows.local_shape(2), (Shape{1, 3}));
  EXPECT_EQ(rows.owner(4, 2), 2);
  const Layout empty_ranks = Layout::row_blocks({2, 3}, 4);
  EXPECT_TRUE(empty_ranks.local_shape(3).empty());
  EXPECT_EQ(empty_ranks.local_extent(3), 0);
  const Layout cols = Layout::col_blocks({4, 7}, 2, StorageOrder::ColMajor);
  EXPECT_EQ(cols.local_shape(1), (Shape{4, 3}));
  EXPECT_EQ(cols.local_index(2, 5).col, 1);
  EXPECT_EQ(cols.leading_dimension(1), 4);
  const Layout grid = Layout::blocks_2d({6, 5}, 2, 3, GridOrder::ColMajor);
  EXPECT_EQ(grid.owner(5, 4), 2 * 2 + 1);
  EXPECT_EQ(grid.local_shape(0), (Shape{3, 2}));
  EXPECT_EQ(grid.local_shape(5), (Shape{3, 1}));
}

TEST(Layout, GeneralGridKeepsOwnedRowsAndColumnsInOrder) {
  // Rank 0 owns the corners of a 3 × 3 grid of blocks, rank 1 the rest.
  const Layout l = Layout::grid({0, 1, 3, 6}, {0, 2, 3, 4}, {0, 1, 0, 1, 1, 1, 0, 1, 0}, 2);
  EXPECT_EQ(l.local_shape(0), (Shape{4, 3}));
  EXPECT_EQ(l.local_shape(1), (Shape{6, 4}));
  const auto idx = l.local_index(5, 3);
  EXPECT_EQ(idx.rank, 0);
  EXPECT_EQ(idx.row, 3);
  EXPECT_EQ(idx.col, 2);
  EXPECT_THROW(Layout::grid({0, 2}, {0, 1}, {0, 0}, 1), tessera::InputError);
  EXPECT_THROW(Layout::grid({0, 2}, {0, 1}, {3}, 2), tessera::InputError);
}

TEST(Layout, WindowAndTransposeAddressTheSameElements) {
  BlockCyclicSpec s;
  s.global = {13, 11};
  s.mb = 3;
  s.nb = 2;
  s.pr = 2;
  s.pc = 2;
  s.csrc = 1;
  const Layout l = Layout::block_cyclic(s);
  const Layout w = l.window(2, 3, 9, 7);
  const Layout t = w.transposed();
  EXPECT_EQ(t.global(), (Shape{7, 9}));
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 7; ++j) {
      const auto a = l.local_index(i + 2, j + 3);
      const auto b = w.local_index(i, j);
      const auto c = t.local_index(j, i);
      EXPECT_EQ(a.rank, b.rank);
      EXPECT_EQ(l.local_offset(a.rank, a.row, a.col), w.local_offset(b.rank, b.row, b.col));
      EXPECT_EQ(c.rank, a.rank);
      EXPECT_EQ(t.local_offset(c.rank, c.row, c.col), l.local_offset(a.rank, a.row, a.col));
    }
  EXPECT_EQ(l.window(4, 4, 0, 3).global(), (Shape{0, 3}));
  EXPECT_THROW((void)l.window(5, 0, 9, 1), tessera::InputError);
}

} // namespace
