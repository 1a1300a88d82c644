// Strided 2-D copies over the OpenMP threads (copy_2d.hpp).
#include "cpu/copy_2d.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace tessera::cpu {

namespace {

// Long enough that a part costs far more than scheduling it, short enough that one long row is
// shared among the threads.
constexpr std::size_t copy_2d_part_bytes = std::size_t{256} << 10;

} // namespace

void copy_2d(std::span<const Copy2d> copies) {
  // One team for all copies; no barrier between them, as their destinations are disjoint.
#pragma omp parallel
  for (const Copy2d& k : copies) {
    if (k.width == 0 || k.height == 0)
      continue;
    const auto parts =
        static_cast<std::int64_t>((k.width + copy_2d_part_bytes - 1) / copy_2d_part_bytes);
    const std::int64_t work = parts * static_cast<std::int64_t>(k.height);
#pragma omp for schedule(static) nowait
    for (std::int64_t w = 0; w < work; ++w) {
      const auto row = static_cast<std::size_t>(w / parts);
      const auto begin = static_cast<std::size_t>(w % parts) * copy_2d_part_bytes;
      std::memcpy(static_cast<unsigned char*>(k.dst) + row * k.dst_pitch + begin,
                  static_cast<const unsigned char*>(k.src) + row * k.src_pitch + begin,
                  std::min(copy_2d_part_bytes, k.width - begin));
    }
  }
}

} // namespace tessera::cpu
