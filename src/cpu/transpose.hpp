// OpenMP out-of-place transpose, cache-blocked, for all four element types and any shape.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.hpp"

namespace tessera::cpu {

// out[j*ld_out + i] = in[i*ld_in + j] for 0 <= i < rows, 0 <= j < cols.
// ld_in >= cols, ld_out >= rows; in and out must not overlap. Uses the calling team's OpenMP
// threads (opens a parallel region when called outside one). Inside an active parallel region
// it is a worksharing loop: every thread of the team must call it with the same arguments.
template <class T>
void transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
               std::int64_t ld_out);

template <class T>
void transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols) {
  transpose(in, out, rows, cols, cols, rows);
}

// Type-erased form for plans that carry a DType.
void transpose(DType t, const void* in, void* out, std::int64_t rows, std::int64_t cols,
               std::int64_t ld_in, std::int64_t ld_out);

// memcpy of n bytes split over the OpenMP threads: the bandwidth ceiling benchmarks compare to.
// Same threading rules as transpose.
void parallel_copy(const void* src, void* dst, std::size_t n);

// Reads n bytes split over the OpenMP threads and returns a checksum of them (so the reads cannot
// be optimised away): the read-bandwidth ceiling reductions compare to. Inside an active parallel
// region it is a worksharing step like transpose, and returns the checksum of the calling
// thread's part.
std::uint64_t parallel_read(const void* src, std::size_t n);

} // namespace tessera::cpu
