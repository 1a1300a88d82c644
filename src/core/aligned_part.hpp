// Cutting an index range into one contiguous part per thread, with bounds on multiples of a
// block (for example 8 doubles: whole cache lines when the rows are aligned).
#pragma once

#include <algorithm>
#include <cstdint>

namespace tessera {

struct IndexRange {
  std::int64_t first = 0, end = 0;
  std::int64_t size() const noexcept { return end - first; }
};

// Part `part` of `parts` of [0, n): the blocks of `align` indices dealt out as evenly as
// possible, in order; the last block may be short. Parts may be empty.
constexpr IndexRange aligned_part(std::int64_t n, std::int64_t align, std::int64_t part,
                                  std::int64_t parts) noexcept {
  const std::int64_t blocks = (n + align - 1) / align;
  return {std::min(n, part * blocks / parts * align),
          std::min(n, (part + 1) * blocks / parts * align)};
}

} // namespace tessera
