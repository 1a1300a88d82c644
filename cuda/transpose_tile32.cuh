// The small-tile transpose kernel: a 32×32 tile of shared memory (rows padded to 33 words),
// 32×8 threads, four elements per thread in each phase, one element word per access, bounds
// checks on every access. Many small blocks keep the device full where a shape offers few large
// tiles (a short side of a few elements, or a matrix that lives in the L2 cache); each warp
// access is one 32-element run of a row in both phases.
#pragma once

#include "cuda/launch.cuh"

namespace tessera::cuda::detail {

// Eight blocks per multiprocessor (at most 32 registers): the occupancy is what makes this
// kernel fast on the shapes it is chosen for.
template <class W>
__global__ void __launch_bounds__(256, 8)
    transpose_tile32(const W* __restrict__ in, W* __restrict__ out, i64 rows, i64 cols, i64 ld_in,
                     i64 ld_out, i64 tiles_y) {
  __shared__ W tile[32][33];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const i64 j0 = static_cast<i64>(blockIdx.x) * 32;
  for (i64 by = blockIdx.y; by < tiles_y; by += gridDim.y) {
    const i64 i0 = by * 32;
    const i64 j = j0 + tx;
#pragma unroll
    for (int k = 0; k < 32; k += 8) {
      const i64 i = i0 + ty + k;
      if (j < cols && i < rows)
        tile[ty + k][tx] = in[i * ld_in + j];
    }
    __syncthreads();
    const i64 i = i0 + tx;
#pragma unroll
    for (int k = 0; k < 32; k += 8) {
      const i64 jj = j0 + ty + k;
      if (i < rows && jj < cols)
        out[jj * ld_out + i] = tile[tx][ty + k];
    }
    __syncthreads(); // the next tile's loads must wait for this tile's reads of shared memory
  }
}

} // namespace tessera::cuda::detail
