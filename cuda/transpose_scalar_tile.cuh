// The scalar-tile transpose kernels: a TR × TC tile of shared memory (rows padded by one
// element word), BX × BY threads, one element word per access and bounds checks on every
// access. Each warp access is one run of BX consecutive elements of a row in both phases; a
// thread's loads of a tile are all in registers before any is stored to shared memory, so
// TR·TC/(BX·BY) loads per thread are in flight at once.
//
// Its shapes (cuda/transpose.cu, `choose`; transpose.hpp lists which shape takes which):
//  - 32×32 tiles: 32×8 threads and eight blocks per multiprocessor (at most 32 registers), or
//    16×16 threads (two 64-byte row runs per warp access): many small blocks keep the device
//    full where a shape offers few large tiles (a short side of a few elements);
//  - 64×64 and 128 × 256-byte tiles, 32×8 threads, 16 or 32 elements per thread: more bytes in
//    flight per block, for large and cached matrices.
#pragma once

#include "cuda/launch.cuh"

namespace tessera::cuda::detail {

template <class W, int TR, int TC, int BX, int BY, int kMinBlocks>
__global__ void __launch_bounds__(BX* BY, kMinBlocks)
    transpose_scalar_tile(const W* __restrict__ in, W* __restrict__ out, i64 rows, i64 cols,
                          i64 ld_in, i64 ld_out, i64 tiles_y) {
  static_assert(TR % BY == 0 && TC % BX == 0 && TC % BY == 0 && TR % BX == 0, "tile vs block");
  constexpr int LR = TR / BY, LC = TC / BX; // load: rows × column runs per thread
  constexpr int SR = TC / BY, SC = TR / BX; // store: output rows × runs per thread
  __shared__ W tile[TR][TC + 1];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const i64 j0 = static_cast<i64>(blockIdx.x) * TC;
  for (i64 by = blockIdx.y; by < tiles_y; by += gridDim.y) {
    const i64 i0 = by * TR;
    W v[LR][LC] = {}; // elements outside the matrix are never stored
#pragma unroll
    for (int a = 0; a < LR; ++a)
#pragma unroll
      for (int b = 0; b < LC; ++b) {
        const i64 i = i0 + ty + a * BY, j = j0 + tx + b * BX;
        if (i < rows && j < cols)
          v[a][b] = in[i * ld_in + j];
      }
#pragma unroll
    for (int a = 0; a < LR; ++a)
#pragma unroll
      for (int b = 0; b < LC; ++b)
        tile[ty + a * BY][tx + b * BX] = v[a][b];
    __syncthreads();
#pragma unroll
    for (int a = 0; a < SR; ++a)
#pragma unroll
      for (int b = 0; b < SC; ++b) {
        const i64 j = j0 + ty + a * BY, i = i0 + tx + b * BX;
        if (i < rows && j < cols)
          out[j * ld_out + i] = tile[tx + b * BX][ty + a * BY];
      }
    __syncthreads(); // the next tile's stores to shared memory wait for this tile's reads
  }
}

} // namespace tessera::cuda::detail
