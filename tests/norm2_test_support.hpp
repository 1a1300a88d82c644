// Shared by the Norm2 rescue tests: f64 matrices whose sums of squares overflow or underflow a
// double (or come close), and accurate norms to compare with. Every matrix is a function of the
// element's position, so every rank builds the same one without communicating.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/reduction.hpp"

namespace tessera::test {

// x87 extended precision: no square of a double overflows or underflows it.
static_assert(std::numeric_limits<long double>::max_exponent >= 16384 &&
                  std::numeric_limits<long double>::digits >= 64,
              "the accurate norms need an 80-bit long double");

// A hash of (i, j, salt) as a double in [0, 1).
inline double position_hash(std::int64_t i, std::int64_t j, std::uint64_t salt) {
  std::uint64_t z = static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ull ^
                    static_cast<std::uint64_t>(j) * 0xc2b2ae3d27d4eb4full ^ salt;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}
// Uniform in [-1, -0.5) ∪ [0.5, 1): a random sign, no exponent change.
inline double signed_mantissa(std::int64_t i, std::int64_t j, std::uint64_t salt) {
  const double u = position_hash(i, j, salt);
  return u < 0.5 ? -(0.5 + u) : u;
}

struct ExtremeCase {
  std::string name;
  std::function<double(std::int64_t i, std::int64_t j, std::int64_t rows, std::int64_t cols)> at;
};

inline std::vector<ExtremeCase> extreme_cases() {
  using I = std::int64_t;
  return {
      {"1e300", [](I i, I j, I, I) { return 1e300 * signed_mantissa(i, j, 1); }},
      {"1e154", [](I, I, I, I) { return 1e154; }},
      {"1e-200", [](I i, I j, I, I) { return (i + j) % 2 ? -1e-200 : 1e-200; }},
      {"subnormal", [](I i, I j, I, I) { return 1e-310 * signed_mantissa(i, j, 2); }},
      {"huge and tiny mixed", // exponents over the whole range
       [](I i, I j, I, I) {
         return std::ldexp(signed_mantissa(i, j, 3),
                           static_cast<int>(position_hash(i, j, 4) * 2090) - 1070);
       }},
      {"a huge row among normal rows",
       [](I i, I j, I rows, I) {
         return (i == rows / 2 ? 1e300 : 1.0) * signed_mantissa(i, j, 5);
       }},
      {"a tiny column and a huge column among normal ones",
       [](I i, I j, I, I cols) {
         const double scale = j == 0 ? 1e-300 : j == cols - 1 ? 1e250 : 1.0;
         return scale * signed_mantissa(i, j, 6);
       }},
      {"zeros and one tiny element", // zero rows and columns stay 0
       [](I i, I j, I rows, I cols) { return i == rows - 1 && j == cols / 2 ? -1e-300 : 0.0; }},
      {"small but no rescue", // squares near 2^-960: the ordinary pass must be accurate
       [](I i, I j, I, I) { return 0x1p-478 * signed_mantissa(i, j, 7); }},
      {"the norm overflows", [](I, I, I, I) { return DBL_MAX; }},
      {"an infinity among huge values",
       [](I i, I j, I, I) {
         return i == 0 && j == 0 ? -std::numeric_limits<double>::infinity()
                                 : 1e300 * signed_mantissa(i, j, 8);
       }},
  };
}

inline std::vector<double> extreme_matrix(const ExtremeCase& c, std::int64_t rows,
                                          std::int64_t cols) {
  std::vector<double> a(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      a[static_cast<std::size_t>(i * cols + j)] = c.at(i, j, rows, cols);
  return a;
}

// sqrt of the sum of the squares of n values `stride` apart: compensated sums of exact-to-2^-64
// squares in long double, rounded once to double (inf when the norm exceeds DBL_MAX).
inline double accurate_norm2(const double* x, std::int64_t n, std::int64_t stride) {
  long double sum = 0.0L, carry = 0.0L;
  for (std::int64_t k = 0; k < n; ++k) {
    const long double v = x[k * stride];
    if (std::isinf(v)) // the compensation would make inf - inf
      return std::numeric_limits<double>::infinity();
    const long double y = v * v - carry;
    const long double t = sum + y;
    carry = (t - sum) - y;
    sum = t;
  }
  return static_cast<double>(std::sqrt(sum));
}

inline std::vector<double> accurate_norms(Axis axis, const double* a, std::int64_t rows,
                                          std::int64_t cols) {
  std::vector<double> v;
  if (axis == Axis::All) {
    v.push_back(accurate_norm2(a, rows * cols, 1));
  } else if (axis == Axis::Rows) {
    for (std::int64_t i = 0; i < rows; ++i)
      v.push_back(accurate_norm2(a + i * cols, cols, 1));
  } else {
    for (std::int64_t j = 0; j < cols; ++j)
      v.push_back(accurate_norm2(a + j, rows, cols));
  }
  return v;
}

// Elements in one value along axis: the sqrt(n) of the tolerance.
inline std::int64_t vector_length(Axis axis, std::int64_t rows, std::int64_t cols) {
  return axis == Axis::All ? rows * cols : axis == Axis::Rows ? cols : rows;
}

// Within 4·sqrt(n) ulps of the accurate norm (plus the spacing of subnormals), or the same
// infinity or zero.
inline bool close_norm(double got, double want, std::int64_t n) {
  if (std::isinf(want) || want == 0.0 || std::isinf(got))
    return got == want;
  const double tol =
      4.0 * std::sqrt(static_cast<double>(std::max<std::int64_t>(n, 1))) * DBL_EPSILON * want;
  return std::fabs(got - want) <= tol + std::numeric_limits<double>::denorm_min();
}

} // namespace tessera::test
