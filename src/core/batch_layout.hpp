// The memory layout of a batch of tridiagonal systems, shared by the CPU (cpu/tridiag.hpp) and
// CUDA (cuda/tridiag.hpp) solvers.
//
// Element i (0 <= i < n) of system s (0 <= s < count) lives at
//
//     x[s * system_stride + i * element_stride]
//
// Two layouts matter:
//   rows         system_stride = ld >= n, element_stride = 1: each system is one contiguous row
//                of a row-major matrix (what ADI solves: full lines after a transpose).
//   interleaved  system_stride = 1, element_stride = ld >= count: element i of consecutive
//                systems is contiguous (coalesced on a GPU, one SIMD lane per system on a CPU).
// Systems must not overlap.
#pragma once

#include <cstdint>

namespace tessera {

struct BatchLayout {
  std::int64_t n = 0;     // unknowns per system
  std::int64_t count = 0; // number of systems
  std::int64_t system_stride = 0;
  std::int64_t element_stride = 1;

  // Each system one contiguous row of a row-major count × ld matrix.
  static BatchLayout rows(std::int64_t n, std::int64_t count, std::int64_t ld) {
    return {n, count, ld, 1};
  }
  static BatchLayout rows(std::int64_t n, std::int64_t count) { return {n, count, n, 1}; }
  // Element i of system s at x[i*ld + s]: systems are the columns of a row-major n × ld matrix.
  static BatchLayout interleaved(std::int64_t n, std::int64_t count, std::int64_t ld) {
    return {n, count, 1, ld};
  }
  static BatchLayout interleaved(std::int64_t n, std::int64_t count) {
    return {n, count, 1, count};
  }
};

} // namespace tessera
