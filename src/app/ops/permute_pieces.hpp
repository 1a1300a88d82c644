// Where a distributed permutation of dimensions moves data, with no exchange between ranks: each
// rank owns a block of the output's outermost dimension (input dimension axes[0]; block sizes
// differ by at most one, ranks with none are legal), reads the input box that fills it, permutes
// it locally and writes it. The block goes in pieces that fit the memory limit: whole output rows
// when one fits, else single rows cut along the output's next dimension. Every rank runs the
// same number of pieces (the largest block's), so that each read and write is one collective
// call; a rank out of pieces moves empty boxes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "io/h5_box.hpp"

namespace tessera::ops {

class PermutePieces {
public:
  // `shape`: the input's; `limit`: bytes for `buffers` buffers of one piece each (an input and
  // an output buffer; more where pieces are read ahead and written behind).
  PermutePieces(std::span<const std::int64_t> shape, std::span<const int> axes,
                std::size_t element_size, int rank, int nranks, std::size_t limit, int buffers = 2);

  // The first output row of `rank`'s block of n rows (rank == nranks: n).
  static std::int64_t block_begin(std::int64_t n, int rank, int nranks) noexcept;

  std::int64_t count() const noexcept { return count_; } // the same on every rank
  std::int64_t largest_elements() const noexcept;        // of any piece of this rank
  std::size_t buffer_bytes() const noexcept;             // of each buffer

  struct Piece {
    io::Box in, out;                 // an empty pair when this rank has run out
    std::vector<std::int64_t> shape; // of the input box (the local permutation's input shape)
    std::uint64_t elements() const noexcept { return out.size(); }
  };
  Piece piece(std::int64_t p) const;

private:
  std::vector<std::int64_t> shape_;
  std::vector<int> axes_;
  std::size_t element_size_;
  std::int64_t begin_ = 0, rows_ = 0; // this rank's block of output rows
  std::int64_t rows_per_piece_ = 1;   // whole rows per piece when splits_ == 1
  std::int64_t splits_ = 1;           // pieces per output row along output dimension 1 otherwise
  std::int64_t count_ = 0;
};

} // namespace tessera::ops
