// Out-of-place transpose on the GPU for f32, f64, c64 and c128, any shape and leading
// dimensions: out[j*ld_out + i] = in[i*ld_in + j] for 0 <= i < rows, 0 <= j < cols.
// Device pointers; the work is queued on `stream` (asynchronous). in and out must not overlap.
//
// The kernel moves tiles through shared memory with 16-byte global loads and stores wherever a
// vector lies inside the tile, whatever the alignment of the rows (rows that do not start on a
// 16-byte boundary are read as aligned vectors shifted by their offset, and only the partial
// vectors at tile edges fall back to element accesses).
//
// In the distributed transpose this is also the fused pack: transposing a rank's m × N block
// into an N × m send buffer puts the piece for destination rank q (columns [b_q, e_q) of the
// block) in rows [b_q, e_q) of the buffer, contiguous, for every q in one launch.
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.hpp"

struct CUstream_st;

namespace tessera::cuda {

void transpose(CUstream_st* stream, DType t, const void* in, void* out, std::int64_t rows,
               std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out);

inline void transpose(CUstream_st* stream, DType t, const void* in, void* out, std::int64_t rows,
                      std::int64_t cols) {
  transpose(stream, t, in, out, rows, cols, cols, rows);
}

template <class T>
void transpose(CUstream_st* stream, const T* in, T* out, std::int64_t rows, std::int64_t cols,
               std::int64_t ld_in, std::int64_t ld_out) {
  transpose(stream, dtype_of<T>, in, out, rows, cols, ld_in, ld_out);
}
template <class T>
void transpose(CUstream_st* stream, const T* in, T* out, std::int64_t rows, std::int64_t cols) {
  transpose(stream, dtype_of<T>, in, out, rows, cols, cols, rows);
}

// Tile shapes compiled for each element size, for benchmarks that compare them. Variant 0 is
// what transpose() uses.
int transpose_variant_count();
// "64x64/256": tile rows x tile columns (elements) / threads per block.
std::string transpose_variant_name(DType t, int variant);
void transpose_variant(CUstream_st* stream, DType t, int variant, const void* in, void* out,
                       std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                       std::int64_t ld_out);

} // namespace tessera::cuda
