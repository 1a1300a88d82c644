// The three moves of one TR × TC shared-memory tile by BX × BY threads, shared by the scalar-tile
// transpose kernels (transpose_scalar_tile.cuh, transpose_lean_tile.cuh): the input rows into
// registers (every load of the tile issued before any is used), the registers into shared
// memory (rows padded by one element word), and shared memory out to the output rows. Each warp
// access is one run of BX consecutive elements of a row. The checked forms test every element
// against the matrix; the unchecked ones, for tiles inside it, compute one base pointer and add
// a per-row step and a constant. Words narrower than 4 bytes (the permutation's 1- and 2-byte
// elements) are staged one per 32-bit shared-memory word, so that a tile column read stays free
// of bank conflicts as it is for 4-byte words.
#pragma once

#include <type_traits>

#include "cuda/launch.cuh"

namespace tessera::cuda::detail {

template <class W, int TR, int TC, int BX, int BY>
struct TileMoves {
  static_assert(TR % BY == 0 && TC % BX == 0 && TC % BY == 0 && TR % BX == 0, "tile vs block");
  static constexpr int LR = TR / BY, LC = TC / BX; // load: rows × column runs per thread
  static constexpr int SR = TC / BY, SC = TR / BX; // store: output rows × runs per thread
  using Staged = std::conditional_t<(sizeof(W) < 4), unsigned int, W>;
  using Regs = W[LR][LC];
  using Tile = Staged[TR][TC + 1];

  // The tile whose first element is (i0, j0). Elements outside the matrix are left as they are.
  template <bool kChecked>
  static __device__ __forceinline__ void load(const W* __restrict__ in, i64 ld_in, i64 rows,
                                              i64 cols, i64 i0, i64 j0, Regs& v) {
    const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
    if constexpr (kChecked) {
#pragma unroll
      for (int a = 0; a < LR; ++a)
#pragma unroll
        for (int b = 0; b < LC; ++b) {
          const i64 i = i0 + ty + a * BY, j = j0 + tx + b * BX;
          if (i < rows && j < cols)
            v[a][b] = in[i * ld_in + j];
        }
    } else {
      const W* src = in + (i0 + ty) * ld_in + (j0 + tx);
      const i64 step = BY * ld_in;
#pragma unroll
      for (int a = 0; a < LR; ++a)
#pragma unroll
        for (int b = 0; b < LC; ++b)
          v[a][b] = src[a * step + b * BX];
    }
  }

  static __device__ __forceinline__ void stage(const Regs& v, Tile& tile) {
    const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
#pragma unroll
    for (int a = 0; a < LR; ++a)
#pragma unroll
      for (int b = 0; b < LC; ++b)
        tile[ty + a * BY][tx + b * BX] = v[a][b];
  }

  // The staged tile to output rows j0 … j0 + TC - 1, columns i0 … i0 + TR - 1.
  template <bool kChecked>
  static __device__ __forceinline__ void store(const Tile& tile, W* __restrict__ out, i64 ld_out,
                                               i64 rows, i64 cols, i64 i0, i64 j0) {
    const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
    W* dst = out + (j0 + ty) * ld_out + (i0 + tx);
    const i64 step = BY * ld_out;
#pragma unroll
    for (int a = 0; a < SR; ++a)
#pragma unroll
      for (int b = 0; b < SC; ++b) {
        if constexpr (kChecked) {
          const i64 j = j0 + ty + a * BY, i = i0 + tx + b * BX;
          if (i < rows && j < cols)
            out[j * ld_out + i] = static_cast<W>(tile[tx + b * BX][ty + a * BY]);
        } else {
          dst[a * step + b * BX] = static_cast<W>(tile[tx + b * BX][ty + a * BY]);
        }
      }
  }
};

} // namespace tessera::cuda::detail
