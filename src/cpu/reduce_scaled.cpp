// The Norm2 rescue's kernels (core/reduction.hpp): the canonical order of reduce_rows and
// fold_rows with squares of power-of-two-scaled elements. They run only when a norm overflowed
// or underflowed, so they are written plainly (one row, or one column tile, per thread).
#include <algorithm>
#include <cmath>

#include "core/throw.hpp"
#include "cpu/reduce.hpp"
#include "cpu/require_shape.hpp"

namespace tessera::cpu {

namespace {

// std::ldexp is exact unless the result is subnormal, and then correctly rounded: the same bits
// on every host.
double scaled_square(double x, int e) {
  const double y = std::ldexp(x, e);
  return y * y;
}

} // namespace

void reduce_rows_scaled(const double* a, std::int64_t rows, std::int64_t cols, const int* row_exp,
                        double* out) {
  detail::require_shape("reduce_rows_scaled", rows, cols);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < rows; ++i) {
    const double* row = a + i * cols;
    const int e = row_exp[i];
    double lane[kSumLanes] = {};
    for (std::int64_t j = 0; j < cols; ++j)
      lane[j % kSumLanes] += scaled_square(row[j], e);
    out[i] = halving_tree(lane);
  }
}

void fold_rows_scaled(const double* a, std::int64_t rows, std::int64_t cols, const int* col_exp,
                      double* acc) {
  detail::require_shape("fold_rows_scaled", rows, cols);
  constexpr std::int64_t kTile = 1024;
  const std::int64_t tiles = (cols + kTile - 1) / kTile;
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < tiles; ++t) {
    const std::int64_t j0 = t * kTile, j1 = std::min(cols, j0 + kTile);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = j0; j < j1; ++j)
        acc[j] += scaled_square(a[i * cols + j], col_exp[j]);
  }
}

} // namespace tessera::cpu
