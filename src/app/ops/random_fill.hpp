// Reproducible random matrices for `tessera generate` and the pipeline job: every element is a
// counter-based hash of (seed, global position), so the values do not depend on the rank
// count, the thread count or the order of work.
//
//   z(seed, n)  = splitmix64(splitmix64(seed) + n)           (64-bit wrap-around arithmetic)
//   real types:   a[i][j]        = u(z(seed, i*cols + j))
//   complex:      a[i][j].real   = u(z(seed, 2*(i*cols + j))), .imag = u(z(seed, 2*(i*cols+j)+1))
//   u(z) = 2 * (z >> 11) * 2^-53 - 1 for f64 / c128, 2 * (z >> 40) * 2^-24 - 1 for f32 / c64:
//   uniform in [-1, 1), exact in the element type.
// docs/output.md shows the same formula in numpy.
#pragma once

#include <cstdint>

#include "core/block_distribution.hpp"
#include "core/dtype.hpp"

namespace tessera::ops {

std::uint64_t splitmix64(std::uint64_t x) noexcept;

// Fills this rank's rows [dist.begin(rank), dist.end(rank)) of the matrix (row-major
// dist.rows(rank) x cols elements of `dtype` at `block`). OpenMP-parallel over rows.
void random_fill(DType dtype, const BlockDistribution& dist, int rank, std::uint64_t seed,
                 void* block);
// The same for an arbitrary range of global rows [row0, row0 + rows).
void random_fill_rows(DType dtype, std::int64_t row0, std::int64_t rows, std::int64_t cols,
                      std::uint64_t seed, void* block);

} // namespace tessera::ops
