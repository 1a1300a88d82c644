// OpenMP out-of-place permutation of the dimensions of a row-major array of rank 1 to 8, for
// elements of 1, 2, 4, 8 or 16 bytes (a permutation moves bytes; the type does not matter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace tessera::cpu {

// Element sizes the permutation takes.
bool permute_element_size_ok(std::size_t element_size) noexcept;

// out, of shape permuted_shape(shape, axes) (permute_layout.hpp), row-major, receives in, of
// `shape`, row-major: output dimension k is input dimension axes[k]. in and out must not overlap.
// The shape is first reduced (merged dimensions, lengths of 1 dropped); then an unchanged
// innermost dimension makes it a batch of row copies, otherwise a batch of 2-D transposes of the
// two dimensions that swap innermost. Opens its own OpenMP parallel region.
void permute(const void* in, void* out, std::size_t element_size,
             std::span<const std::int64_t> shape, std::span<const int> axes);

} // namespace tessera::cpu
