// The checked scalar-tile transpose kernel: the tile moves of transpose_tile_moves.cuh with
// bounds checks on every access, from a two-dimensional grid whose consecutive blocks take
// consecutive tiles along a row of tiles (blockIdx.y loops when there are more than 65535 rows
// of tiles). transpose() uses it for 4-byte matrices of at most 32 rows (32×32 tiles, 16×16
// threads: two 64-byte row runs per warp access); its other shapes (32×32 with 32×8 threads,
// 64×64, 128 rows × 256 bytes) remain variants for comparison with the lean tiles.
#pragma once

#include "cuda/transpose_tile_moves.cuh"

namespace tessera::cuda::detail {

template <class W, int TR, int TC, int BX, int BY, int kMinBlocks>
__global__ void __launch_bounds__(BX* BY, kMinBlocks)
    transpose_scalar_tile(const W* __restrict__ in, W* __restrict__ out, i64 rows, i64 cols,
                          i64 ld_in, i64 ld_out, i64 tiles_y) {
  using M = TileMoves<W, TR, TC, BX, BY>;
  __shared__ typename M::Tile tile;
  const i64 j0 = static_cast<i64>(blockIdx.x) * TC;
  for (i64 by = blockIdx.y; by < tiles_y; by += gridDim.y) {
    const i64 i0 = by * TR;
    typename M::Regs v = {}; // elements outside the matrix are never stored
    M::template load<true>(in, ld_in, rows, cols, i0, j0, v);
    M::stage(v, tile);
    __syncthreads();
    M::template store<true>(tile, out, ld_out, rows, cols, i0, j0);
    __syncthreads(); // the next tile's stores to shared memory wait for this tile's reads
  }
}

} // namespace tessera::cuda::detail
