// The pieces of a distributed permutation of dimensions (permute_pieces.hpp).
#include "ops/permute_pieces.hpp"

#include <algorithm>

#include "core/permute_layout.hpp"

namespace tessera::ops {

namespace {

std::int64_t pieces_block_begin(std::int64_t n, int rank, int nranks) {
  const std::int64_t base = n / nranks, extra = n % nranks;
  return base * rank + std::min<std::int64_t>(rank, extra);
}

std::int64_t pieces_ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

} // namespace

PermutePieces::PermutePieces(std::span<const std::int64_t> shape, std::span<const int> axes,
                             std::size_t element_size, int rank, int nranks, std::size_t limit,
                             int buffers)
    : shape_(shape.begin(), shape.end()), axes_(axes.begin(), axes.end()),
      element_size_(element_size) {
  const std::vector<std::int64_t> out = permuted_shape(shape, axes);
  const std::int64_t n = out[0];
  begin_ = pieces_block_begin(n, rank, nranks);
  rows_ = pieces_block_begin(n, rank + 1, nranks) - begin_;
  const std::int64_t largest_block = pieces_ceil_div(n, nranks);
  std::int64_t row_elements = 1;
  for (std::size_t k = 1; k < out.size(); ++k)
    row_elements *= out[k];
  // The buffers of the pieces in flight share the limit.
  const auto budget = static_cast<std::int64_t>(
      limit / (static_cast<std::size_t>(std::max(buffers, 1)) * element_size));
  rows_per_piece_ = std::max<std::int64_t>(1, budget / std::max<std::int64_t>(1, row_elements));
  if (budget < row_elements && out.size() > 1) {
    // Not even one row fits: cut rows along output dimension 1 into parts of the budget.
    const std::int64_t sub = row_elements / out[1]; // elements per step of dimension 1
    const std::int64_t per_split =
        std::max<std::int64_t>(1, budget / std::max<std::int64_t>(1, sub));
    splits_ = pieces_ceil_div(out[1], per_split);
    rows_per_piece_ = 1;
  }
  count_ = pieces_ceil_div(largest_block, rows_per_piece_) * splits_;
}

std::int64_t PermutePieces::block_begin(std::int64_t n, int rank, int nranks) noexcept {
  return pieces_block_begin(n, rank, nranks);
}

std::int64_t PermutePieces::largest_elements() const noexcept {
  const std::vector<std::int64_t> out = permuted_shape(shape_, axes_);
  std::int64_t row = 1;
  for (std::size_t k = 1; k < out.size(); ++k)
    row *= out[k];
  if (rows_ == 0)
    return 0;
  if (splits_ > 1)
    return row / out[1] * pieces_ceil_div(out[1], splits_);
  return row * std::min(rows_per_piece_, rows_);
}

std::size_t PermutePieces::buffer_bytes() const noexcept {
  return static_cast<std::size_t>(largest_elements()) * element_size_;
}

PermutePieces::Piece PermutePieces::piece(std::int64_t p) const {
  const std::size_t rank = shape_.size();
  const std::vector<std::int64_t> out = permuted_shape(shape_, axes_);
  // Output rows [r0, r0 + nr) and, along output dimension 1, [c0, c0 + nc).
  std::int64_t r0 = 0, nr = 0, c0 = 0, nc = rank > 1 ? out[1] : 1;
  const std::int64_t row_piece = p / splits_, split = p % splits_;
  r0 = begin_ + row_piece * rows_per_piece_;
  nr = std::clamp<std::int64_t>(begin_ + rows_ - r0, 0, rows_per_piece_);
  if (splits_ > 1) {
    const std::int64_t per_split = pieces_ceil_div(out[1], splits_);
    c0 = std::min(out[1], split * per_split);
    nc = std::min(out[1], c0 + per_split) - c0;
  }
  Piece piece;
  piece.in.start.assign(rank, 0);
  piece.out.start.assign(rank, 0);
  piece.out.count.assign(out.begin(), out.end());
  piece.shape = shape_;
  const bool empty = nr == 0 || nc == 0;
  piece.out.start[0] = empty ? 0 : static_cast<hsize_t>(r0);
  piece.out.count[0] = static_cast<hsize_t>(empty ? 0 : nr);
  if (rank > 1) {
    piece.out.start[1] = empty ? 0 : static_cast<hsize_t>(c0);
    piece.out.count[1] = static_cast<hsize_t>(empty ? 0 : nc);
  }
  // The input box: the same ranges, on the input dimensions they come from.
  for (std::size_t k = 0; k < rank; ++k) {
    const auto a = static_cast<std::size_t>(axes_[k]);
    piece.in.start[a] = piece.out.start[k];
    piece.shape[a] = static_cast<std::int64_t>(piece.out.count[k]);
  }
  piece.in.count.assign(piece.shape.begin(), piece.shape.end());
  return piece;
}

} // namespace tessera::ops
