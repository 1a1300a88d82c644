// The lean scalar-tile transpose: the tiles of transpose_scalar_tile.cuh (TR × TC of shared
// memory, BX × BY threads, one element word per access, every load of a tile in registers
// before any store to shared memory), with the bounds checks and the 64-bit index arithmetic
// kept out of the tiles that lie wholly inside the matrix. An interior tile computes one
// base pointer per phase; each of its accesses is that pointer plus a per-row step and a
// constant, with no predicate. Only the tiles on the last row and column of tiles check.
//
// One block per tile, from a one-dimensional grid in which consecutive blocks take consecutive
// tiles down a column of tiles: the blocks resident at one time write long runs of the same
// output rows and finish their 128-byte lines together. Measured on an H200 (bench/RESULTS.md),
// that order moved 16411×16363 f64 at 0.91 of a device copy where the same kernel taking its
// tiles along rows of tiles reached 0.77 (geam, whose grid takes the same order, 0.90).
#pragma once

#include "cuda/launch.cuh"

namespace tessera::cuda::detail {

template <class W, int TR, int TC, int BX, int BY, int kMinBlocks>
__global__ void __launch_bounds__(BX* BY, kMinBlocks)
    transpose_lean_tile(const W* __restrict__ in, W* __restrict__ out, i64 rows, i64 cols,
                        i64 ld_in, i64 ld_out, unsigned tiles_y) {
  static_assert(TR % BY == 0 && TC % BX == 0 && TC % BY == 0 && TR % BX == 0, "tile vs block");
  constexpr int LR = TR / BY, LC = TC / BX; // load: rows × column runs per thread
  constexpr int SR = TC / BY, SC = TR / BX; // store: output rows × runs per thread
  __shared__ W tile[TR][TC + 1];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const unsigned t = blockIdx.x;
  const unsigned bx = t / tiles_y, by = t % tiles_y;
  const i64 i0 = static_cast<i64>(by) * TR, j0 = static_cast<i64>(bx) * TC;
  const bool interior = i0 + TR <= rows && j0 + TC <= cols;

  W v[LR][LC] = {}; // elements outside the matrix are never stored
  if (interior) {
    const W* src = in + (i0 + ty) * ld_in + (j0 + tx);
    const i64 step = BY * ld_in;
#pragma unroll
    for (int a = 0; a < LR; ++a)
#pragma unroll
      for (int b = 0; b < LC; ++b)
        v[a][b] = src[a * step + b * BX];
  } else {
#pragma unroll
    for (int a = 0; a < LR; ++a)
#pragma unroll
      for (int b = 0; b < LC; ++b) {
        const i64 i = i0 + ty + a * BY, j = j0 + tx + b * BX;
        if (i < rows && j < cols)
          v[a][b] = in[i * ld_in + j];
      }
  }
#pragma unroll
  for (int a = 0; a < LR; ++a)
#pragma unroll
    for (int b = 0; b < LC; ++b)
      tile[ty + a * BY][tx + b * BX] = v[a][b];
  __syncthreads();
  if (interior) {
    W* dst = out + (j0 + ty) * ld_out + (i0 + tx);
    const i64 step = BY * ld_out;
#pragma unroll
    for (int a = 0; a < SR; ++a)
#pragma unroll
      for (int b = 0; b < SC; ++b)
        dst[a * step + b * BX] = tile[tx + b * BX][ty + a * BY];
  } else {
#pragma unroll
    for (int a = 0; a < SR; ++a)
#pragma unroll
      for (int b = 0; b < SC; ++b) {
        const i64 j = j0 + ty + a * BY, i = i0 + tx + b * BX;
        if (i < rows && j < cols)
          out[j * ld_out + i] = tile[tx + b * BX][ty + a * BY];
      }
  }
}

} // namespace tessera::cuda::detail
