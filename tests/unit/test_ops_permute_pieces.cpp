// The pieces of a distributed permutation: over all ranks and pieces every output element is
// written once, each piece's input box is what its output box needs, pieces fit the memory
// limit where one output element step can, and every rank runs the same number of pieces.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/permute_layout.hpp"
#include "ops/permute_pieces.hpp"

using namespace tessera;

namespace {

struct Case {
  std::vector<std::int64_t> shape;
  std::vector<int> axes;
  std::size_t limit;
};

void expect_pieces_cover_output(const Case& c, int nranks) {
  const std::vector<std::int64_t> out = permuted_shape(c.shape, c.axes);
  std::int64_t total = 1;
  for (const std::int64_t n : out)
    total *= n;
  std::vector<int> written(static_cast<std::size_t>(total), 0);
  std::int64_t count = -1;
  for (int rank = 0; rank < nranks; ++rank) {
    const ops::PermutePieces pieces(c.shape, c.axes, 4, rank, nranks, c.limit);
    if (count < 0)
      count = pieces.count();
    EXPECT_EQ(pieces.count(), count) << "rank " << rank;
    for (std::int64_t p = 0; p < pieces.count(); ++p) {
      const ops::PermutePieces::Piece piece = pieces.piece(p);
      ASSERT_LE(piece.elements() * 4, pieces.buffer_bytes());
      // The input box is the output box read through the axes.
      for (std::size_t k = 0; k < out.size(); ++k) {
        const auto a = static_cast<std::size_t>(c.axes[k]);
        EXPECT_EQ(piece.in.start[a], piece.out.start[k]);
        EXPECT_EQ(piece.in.count[a], piece.out.count[k]);
        EXPECT_EQ(piece.shape[a], static_cast<std::int64_t>(piece.out.count[k]));
      }
      if (piece.elements() == 0)
        continue;
      // Mark the output box's elements (row-major over the output's shape).
      std::vector<std::int64_t> idx(out.size(), 0);
      for (std::uint64_t e = 0; e < piece.elements(); ++e) {
        std::uint64_t rest = e;
        std::int64_t flat = 0;
        for (std::size_t k = out.size(); k-- > 0;) {
          idx[k] = static_cast<std::int64_t>(piece.out.start[k] + rest % piece.out.count[k]);
          rest /= piece.out.count[k];
        }
        for (std::size_t k = 0; k < out.size(); ++k)
          flat = flat * out[k] + idx[k];
        ++written[static_cast<std::size_t>(flat)];
      }
    }
  }
  for (std::int64_t e = 0; e < total; ++e)
    ASSERT_EQ(written[static_cast<std::size_t>(e)], 1) << "output element " << e;
}

} // namespace

TEST(PermutePieces, EveryOutputElementOnceAtAnyRankCount) {
  const Case cases[] = {
      {{5, 7, 11}, {1, 2, 0}, 1 << 20},    // one piece per rank
      {{5, 7, 11}, {1, 2, 0}, 8 * 4 * 55}, // four 55-element output rows a piece
      {{3, 13, 17}, {2, 0, 1}, 16},        // single rows cut along output dimension 1
      {{2, 1, 7, 9}, {3, 0, 1, 2}, 40},    // a dimension of length 1, cut rows
      {{13}, {0}, 8},                      // rank 1
      {{2, 3, 2, 3, 2}, {4, 3, 2, 1, 0}, 24},
  };
  for (const Case& c : cases)
    for (int nranks : {1, 2, 3, 5, 16})
      expect_pieces_cover_output(c, nranks);
}

TEST(PermutePieces, RanksBeyondTheOuterLengthMoveNothing) {
  const std::vector<std::int64_t> shape{4, 3, 2};
  const std::vector<int> axes{2, 0, 1};                                        // 2 output rows
  const ops::PermutePieces pieces(shape, axes, 8, 3, 5, std::size_t{1} << 20); // rank 3 of 5
  EXPECT_EQ(pieces.count(), 1);
  EXPECT_EQ(pieces.piece(0).elements(), 0u);
  EXPECT_EQ(pieces.buffer_bytes(), 0u);
}

TEST(PermutePieces, BuffersShareTheLimit) {
  // Output rows of 5 x 11 doubles (440 bytes): four buffers of one row fit 1760 bytes, two rows
  // of two buffers do.
  const std::vector<std::int64_t> shape{5, 7, 11};
  const std::vector<int> axes{1, 0, 2};
  const ops::PermutePieces four(shape, axes, 8, 0, 1, 1760, 4);
  EXPECT_EQ(four.buffer_bytes(), 440u);
  EXPECT_EQ(four.count(), 7);
  const ops::PermutePieces two(shape, axes, 8, 0, 1, 1760);
  EXPECT_EQ(two.buffer_bytes(), 880u);
  EXPECT_EQ(two.count(), 4);
}
