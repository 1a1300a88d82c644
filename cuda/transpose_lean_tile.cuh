// The lean scalar-tile transpose: the tile moves of transpose_tile_moves.cuh (TR × TC of shared
// memory, BX × BY threads, one element word per access, every load of a tile in registers
// before any store to shared memory), with the bounds checks and the 64-bit index arithmetic
// kept out of the tiles that lie wholly inside the matrix: only the tiles on the last row and
// column of tiles check.
//
// One block per tile, from a one-dimensional grid in which consecutive blocks take consecutive
// tiles down a column of tiles: the blocks resident at one time write long runs of the same
// output rows and finish their 128-byte lines together. Measured on an H200 (bench/RESULTS.md),
// that order moved 16411×16363 f64 at 0.91 of a device copy where the same kernel taking its
// tiles along rows of tiles reached 0.77 (geam, whose grid takes the same order, 0.90).
#pragma once

#include "cuda/transpose_tile_moves.cuh"

namespace tessera::cuda::detail {

// One matrix: what transpose() launches.
struct OneMatrix {
  static constexpr bool kBatched = false;
};

// Tile t (of tiles_y per column of tiles) of the matrix at in, out.
template <class W, int TR, int TC, int BX, int BY>
__device__ __forceinline__ void lean_tile(const W* __restrict__ in, W* __restrict__ out, i64 rows,
                                          i64 cols, i64 ld_in, i64 ld_out, unsigned t,
                                          unsigned tiles_y) {
  using M = TileMoves<W, TR, TC, BX, BY>;
  __shared__ typename M::Tile tile;
  const unsigned bx = t / tiles_y, by = t % tiles_y;
  const i64 i0 = static_cast<i64>(by) * TR, j0 = static_cast<i64>(bx) * TC;
  const bool interior = i0 + TR <= rows && j0 + TC <= cols;
  typename M::Regs v = {}; // elements outside the matrix are never stored
  if (interior)
    M::template load<false>(in, ld_in, rows, cols, i0, j0, v);
  else
    M::template load<true>(in, ld_in, rows, cols, i0, j0, v);
  M::stage(v, tile);
  __syncthreads();
  if (interior)
    M::template store<false>(tile, out, ld_out, rows, cols, i0, j0);
  else
    M::template store<true>(tile, out, ld_out, rows, cols, i0, j0);
}

// Batch: OneMatrix, or a batch of matrices of one shape and leading dimensions (the permutation
// of dimensions, cuda/permute_kernels.cuh): count() of them, matrix b at the element offsets
// offsets(b) of in and out. blockIdx.y walks the batch (stepping by gridDim.y); blockIdx.x is the
// tile within a matrix.
template <class W, int TR, int TC, int BX, int BY, int kMinBlocks, class Batch = OneMatrix>
__global__ void __launch_bounds__(BX* BY, kMinBlocks)
    transpose_lean_tile(const W* __restrict__ in, W* __restrict__ out, i64 rows, i64 cols,
                        i64 ld_in, i64 ld_out, unsigned tiles_y, Batch batch = {}) {
  if constexpr (!Batch::kBatched) {
    lean_tile<W, TR, TC, BX, BY>(in, out, rows, cols, ld_in, ld_out, blockIdx.x, tiles_y);
  } else {
    for (i64 b = blockIdx.y; b < batch.count(); b += gridDim.y) {
      if (b != blockIdx.y)
        __syncthreads(); // the previous matrix's reads of the shared tile are done
      i64 off_in = 0, off_out = 0;
      batch.offsets(b, off_in, off_out);
      lean_tile<W, TR, TC, BX, BY>(in + off_in, out + off_out, rows, cols, ld_in, ld_out,
                                   blockIdx.x, tiles_y);
    }
  }
}

} // namespace tessera::cuda::detail
