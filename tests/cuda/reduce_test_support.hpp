// Shared by the CUDA reduction tests: every op and axis, the dense copy of a stored block that
// the serial reference takes, and the length of a result.
#pragma once

#include <cstdint>
#include <vector>

#include "core/reduction.hpp"

namespace tessera::test {

inline constexpr Op kOps[] = {Op::Sum,   Op::Min,   Op::Max,    Op::Mean,
                              Op::Norm1, Op::Norm2, Op::NormInf};
inline constexpr Axis kAxes[] = {Axis::All, Axis::Rows, Axis::Cols};

// The data as a dense rows × cols copy (for the reference) of a block stored with leading
// dimension ld at element offset off.
template <class T>
std::vector<T> dense(const std::vector<T>& stored, std::int64_t rows, std::int64_t cols,
                     std::int64_t ld, std::int64_t off) {
  std::vector<T> d(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      d[i * cols + j] = stored[off + i * ld + j];
  return d;
}

// Values a reduction along `axis` of a rows × cols block gives.
inline std::size_t result_size(Axis axis, std::int64_t rows, std::int64_t cols) {
  return axis == Axis::All ? 1 : static_cast<std::size_t>(axis == Axis::Rows ? rows : cols);
}

} // namespace tessera::test
