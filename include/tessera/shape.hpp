// The global shape of a row-major matrix (part of the public API: tessera/tessera.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

struct Shape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;

  std::int64_t size() const noexcept { return rows * cols; }
  bool empty() const noexcept { return rows == 0 || cols == 0; }
  Shape transposed() const noexcept { return {cols, rows}; }
  friend bool operator==(const Shape&, const Shape&) = default;
  std::string str() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};

} // namespace tessera
