// Shared by the tridiagonal and ADI line tests (and the GPU heat2d test): a fresh seed, the
// relative difference of two fields, and the transpose of a row-major block.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace tridiag_test {

inline unsigned fresh_seed() {
  return std::random_device{}();
}

// Largest |x - ref| over the largest |ref|.
inline double max_rel(const std::vector<double>& x, const std::vector<double>& ref) {
  double e = 0.0, m = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    e = std::max(e, std::abs(x[k] - ref[k]));
    m = std::max(m, std::abs(ref[k]));
  }
  return e / m;
}

// The cols × rows transpose of a (rows × cols, row-major): element (r, c) moves to c * rows + r,
// so rows of lines become columns (line s at [i * lines + s]) and back.
inline std::vector<double> transposed(const std::vector<double>& a, std::int64_t rows,
                                      std::int64_t cols) {
  std::vector<double> t(a.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      t[static_cast<std::size_t>(c * rows + r)] = a[static_cast<std::size_t>(r * cols + c)];
  return t;
}

} // namespace tridiag_test
