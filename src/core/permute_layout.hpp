// The shape of a permutation of dimensions, reduced to what moves memory: dimensions of length 1
// dropped, and dimensions that stay next to each other and in order in the output merged into
// one. (2, 3, 4, 5) under (0, 2, 3, 1) becomes (2, 3, 20) under (0, 2, 1): one batch of 2-D
// transposes. The kernels of both backends (cpu/permute.hpp, cuda/permute.hpp) work on the
// reduced form only, through the moves it takes (PermuteMoves).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tessera {

// Ranks the permutation kernels take.
inline constexpr int max_permute_rank = 8;

// InputError unless `axes` is a permutation of 0..rank-1 for the shape's rank (1..8) and every
// length is non-negative.
void check_permutation(std::span<const std::int64_t> shape, std::span<const int> axes);

// out_shape[k] = shape[axes[k]].
std::vector<std::int64_t> permuted_shape(std::span<const std::int64_t> shape,
                                         std::span<const int> axes);

struct PermuteLayout {
  std::vector<std::int64_t> shape; // of the input, reduced; empty when nothing moves (size 0/1)
  std::vector<int> axes;           // output dimension k is input dimension axes[k]
  std::int64_t elements = 0;       // of the whole array
  bool identity() const noexcept;  // the output's bytes are the input's
};

// The reduced form of a checked permutation.
PermuteLayout reduce_permutation(std::span<const std::int64_t> shape, std::span<const int> axes);

// Element strides of a row-major array of this shape.
std::vector<std::int64_t> row_major_strides(std::span<const std::int64_t> shape);

// The dimensions a kernel walks besides the ones it moves: lengths and the element strides of
// input and output, outermost first.
struct PermuteOuter {
  std::vector<std::int64_t> length, in_stride, out_stride;
  std::int64_t count() const noexcept; // of outer indices (1 when there is no outer dimension)
  // The input and output offsets of outer index q (row-major over `length`).
  void offsets(std::int64_t q, std::int64_t& in_off, std::int64_t& out_off) const noexcept;
};

// What a reduced permutation moves, in elements.
struct PermuteMoves {
  enum class Kind {
    None,     // no element (an empty array)
    Copy,     // the output's bytes are the input's: one copy of `elements`
    Rows,     // the innermost dimension stays: for each outer index, one contiguous row of
              // `row` elements, at the outer offsets
    Transpose // for each outer index, a 2-D transpose at the outer offsets:
              // out[c*ld_out + r] = in[r*ld_in + c], 0 <= r < rows, 0 <= c < cols; `rows` is
              // the output's innermost dimension, `cols` the input's
  };
  Kind kind = Kind::None;
  std::int64_t elements = 0;
  std::int64_t row = 0;
  std::int64_t rows = 0, cols = 0, ld_in = 0, ld_out = 0;
  PermuteOuter outer;
};
PermuteMoves permute_moves(const PermuteLayout& p);

} // namespace tessera
