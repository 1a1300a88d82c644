// Out-of-place transpose on the GPU for f32, f64, c64 and c128, any shape and leading
// dimensions: out[j*ld_out + i] = in[i*ld_in + j] for 0 <= i < rows, 0 <= j < cols.
// Device pointers; the work is queued on `stream` (asynchronous). in and out must not overlap.
//
// The kernel is chosen from the shape and layout (transpose_choice(); measured on an H200):
//  - small scalar tiles (32×32, element accesses): one side at most 32 (4-byte elements with
//    16×16 threads, two 64-byte row runs per warp access; 8-byte ones with 32×8 threads and
//    eight blocks per multiprocessor);
//  - large scalar tiles (32×8 threads, element accesses, 16 or 32 loads in flight per thread):
//    64×64 for 4- and 8-byte matrices of at most 48 MiB (they stay in the L2 cache), for
//    larger 4-byte matrices whose rows all start on 16-byte vectors (input) and 32-byte sectors
//    (output), and for larger 8-byte matrices whose rows do not (odd leading dimensions,
//    offset sub-blocks); 128×64 for larger 4-byte matrices whose rows do not;
//  - wide tiles: larger 8-byte matrices whose rows do (32×32 tiles of 256-byte runs) and
//    16-byte elements of every shape (32×32, 512-byte runs): each warp instruction is one
//    contiguous run of aligned 16-byte vectors along a row, element accesses only for the
//    partial vectors at its two ends.
// transpose_variant() also offers the classic tile (16-byte vectors, output rows cut on
// sectors), a skinny kernel (the short side held whole in shared memory) and flat and tall
// wide tiles, for comparison.
// No byte outside the matrices is read or written (padding between rows is left alone).
//
// In the distributed transpose this is also the fused pack: transposing a rank's m × N block
// into an N × m send buffer puts the piece for destination rank q (columns [b_q, e_q) of the
// block) in rows [b_q, e_q) of the buffer, contiguous, for every q in one launch.
#pragma once

#include <cstdint>
#include <string>

#include "core/backend_fn.hpp"
#include "core/dtype.hpp"

struct CUstream_st;

namespace tessera::cuda {

TESSERA_CUDA_FN(void transpose(CUstream_st* stream, DType t, const void* in, void* out,
                               std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                               std::int64_t ld_out));

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

// The kernels compiled for each element size, for benchmarks and tests that compare them.
// Variant 0 is the automatic choice (what transpose() uses); the others force one kernel
// (a kernel that cannot take the layout falls back to the first tile variant).
TESSERA_CUDA_FN_OR(0, int transpose_variant_count());
// "auto", "tile 64x64/256/mb4", "wide 128x128", "skinny".
TESSERA_CUDA_FN_OR("?", std::string transpose_variant_name(DType t, int variant));
TESSERA_CUDA_FN(void transpose_variant(CUstream_st* stream, DType t, int variant, const void* in,
                                       void* out, std::int64_t rows, std::int64_t cols,
                                       std::int64_t ld_in, std::int64_t ld_out));
// The variant transpose() picks for this shape and layout (never 0).
TESSERA_CUDA_FN_OR(0, int transpose_choice(DType t, const void* in, const void* out,
                                           std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                                           std::int64_t ld_out));

} // namespace tessera::cuda
