// Out-of-place transpose on the GPU for f32, f64, c64 and c128, any shape and leading
// dimensions: out[j*ld_out + i] = in[i*ld_in + j] for 0 <= i < rows, 0 <= j < cols.
// Device pointers; the work is queued on `stream` (asynchronous). in and out must not overlap.
//
// The kernel is chosen from the shape and the pointers' alignment (transpose_choice();
// measured on an H200, bench/RESULTS.md):
//  - lean scalar tiles (cuda/transpose_lean_tile.cuh: 32×8 threads, element accesses, every
//    load of a tile in registers first, no bounds checks inside the matrix, consecutive blocks
//    down a column of tiles): 128 rows × 256 bytes for matrices of at least 128 rows over
//    48 MiB, whatever their leading dimensions (tall-and-skinny included); 64×64 (32×32 for
//    16-byte elements) for smaller ones, which stay in the L2 cache, and for 33–127 rows;
//    32×32 with many small blocks for 8- and 16-byte matrices of at most 32 rows;
//  - 32×32 scalar tiles of 16×16 threads (two 64-byte row runs per warp access) for 4-byte
//    matrices of at most 32 rows;
//  - complex data aligned to 4 bytes only: the classic tile's element-word path.
// transpose_variant() forces one of these (tests, `tessera bench`); the kernels kept only for
// comparison are the benchmark's (bench/cuda/transpose_variants.hpp).
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

// The choice table's kernels, for benchmarks and tests that compare them. Variant 0 is the
// automatic choice (what transpose() uses); the others force one kernel (complex data aligned
// to 4 bytes only always takes the classic tile, the one kernel that can).
TESSERA_CUDA_FN_OR(0, int transpose_variant_count());
// "auto", "tile 64x64/256/mb4", "lean 128x32/32x8".
TESSERA_CUDA_FN_OR("?", std::string transpose_variant_name(DType t, int variant));
TESSERA_CUDA_FN(void transpose_variant(CUstream_st* stream, DType t, int variant, const void* in,
                                       void* out, std::int64_t rows, std::int64_t cols,
                                       std::int64_t ld_in, std::int64_t ld_out));
// The variant transpose() picks for this shape and layout (never 0).
TESSERA_CUDA_FN_OR(0, int transpose_choice(DType t, const void* in, const void* out,
                                           std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                                           std::int64_t ld_out));

} // namespace tessera::cuda
