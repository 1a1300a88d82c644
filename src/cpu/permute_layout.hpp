// The shape of a permutation of dimensions, reduced to what moves memory: dimensions of length 1
// dropped, and dimensions that stay next to each other and in order in the output merged into
// one. (2, 3, 4, 5) under (0, 2, 3, 1) becomes (2, 3, 20) under (0, 2, 1): one batch of 2-D
// transposes. The kernels work on the reduced form only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tessera::cpu {

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

} // namespace tessera::cpu
