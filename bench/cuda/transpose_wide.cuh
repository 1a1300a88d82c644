// The wide-row transpose kernel: any shape, any leading dimensions, any element alignment.
//
// A block moves one TI × TJ tile (TI*E = TJ*E = 512 or 256 bytes) through shared memory. In
// both phases the lanes of a warp take consecutive 16-byte vectors of ONE row segment, so each
// warp instruction covers up to 512 contiguous bytes. Rows that do not start on a 16-byte
// boundary (odd leading dimensions, offset sub-blocks) are read and written as the aligned
// vectors that cover them: a 512-byte run then touches five 128-byte lines instead of four,
// where a warp instruction of 32-element or 128-byte pieces would touch two lines per piece.
// The number of lines per instruction, not the bytes, is what limits a transpose of
// misaligned rows, so this is the kernel for them.
//
//   load:  row r of the tile, vector v holds local columns v*VW - m + k (m: the row's phase);
//          a vector that lies inside the matrix's memory span is read whole (elements outside
//          the tile are dropped), others element by element. Each element goes to smem[c][r].
//   store: output row c of the tile (input column j0 + c), vector u holds local rows
//          u*VW - m' + k; vectors wholly inside the tile's segment are stored whole, the two
//          edge vectors element by element, so no byte outside the tile is written.
// Words of the element's size are moved, never interpreted.
#pragma once

#include "cuda/launch.cuh"
#include "cuda/transpose_kernel.cuh"

namespace tessera::cuda::detail {

template <class W, int TI, int TJ, int NT>
struct WideTile : TileArgs<W> {
  static constexpr int E = static_cast<int>(sizeof(W));
  static constexpr int VW = 16 / E; // elements per 16-byte vector
  static constexpr int NW = NT / 32;
  static constexpr int S = TI + 1; // shared row stride (odd: spreads the scatter over banks)
  // Lanes per segment: one 16-byte vector each, covering the segment (TJ or TI elements).
  static constexpr int LI = TJ / VW < 32 ? TJ / VW : 32;
  static constexpr int LO = TI / VW < 32 ? TI / VW : 32;
  // Vectors a segment can span when it starts mid-vector, per lane.
  static constexpr int QI = (TJ / VW + (VW > 1 ? 1 : 0) + LI - 1) / LI;
  static constexpr int QO = (TI / VW + (VW > 1 ? 1 : 0) + LO - 1) / LO;
  // Segments a warp instruction covers, and segment groups per warp.
  static constexpr int GI = TI / (NW * (32 / LI));
  static constexpr int GO = TJ / (NW * (32 / LO));
  static constexpr int kBatch = GI < 8 ? GI : 8; // rows whose loads fly together
  static_assert(TI % (NW * (32 / LI)) == 0 && TJ % (NW * (32 / LO)) == 0, "tile vs block");
  static_assert(GI % kBatch == 0, "batches");
  using V = Vec<W, VW>;
  static constexpr std::size_t kSmemBytes = sizeof(W) * static_cast<std::size_t>(TJ) * S;

  using A = TileArgs<W>;
  using A::in, A::out, A::rows, A::cols, A::ld_in, A::ld_out, A::span, A::phase_in, A::phase_out,
      A::tiles_x;

  __device__ void run(W* tile, i64 t) const {
    const i64 ty = t / tiles_x, tx = t - ty * tiles_x;
    const i64 i0 = ty * TI, j0 = tx * TJ;
    const int nr = static_cast<int>(min(static_cast<i64>(TI), rows - i0));
    const int nc = static_cast<int>(min(static_cast<i64>(TJ), cols - j0));
    const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
    {
      const int sub = lane / LI, ln = lane % LI;
      // g(b, r, f0, m) for the batch rows b of group g0 that lie in the tile: tile row r, its
      // first element's offset f0 and its phase m.
      const auto each_row = [&](int g0, auto&& g) {
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          const int r = ((g0 + b) * NW + warp) * (32 / LI) + sub;
          const i64 f0 = (i0 + r) * ld_in + j0;
          const int m = VW > 1 ? static_cast<int>((phase_in + f0) & (VW - 1)) : 0;
          if (r < nr)
            g(b, r, f0, m);
        }
      };
#pragma unroll
      for (int g0 = 0; g0 < GI; g0 += kBatch) {
        V buf[kBatch][QI];
        each_row(g0, [&](int b, int, i64 f0, int m) {
#pragma unroll
          for (int q = 0; q < QI; ++q) {
            const int c0 = (ln + q * LI) * VW - m;
            if (c0 >= nc)
              continue;
            const i64 lo = f0 + c0;
            if (lo >= 0 && lo + VW <= span) {
              buf[b][q] = *reinterpret_cast<const V*>(in + lo);
            } else {
#pragma unroll
              for (int k = 0; k < VW; ++k)
                if (c0 + k >= 0 && c0 + k < nc)
                  buf[b][q].w[k] = in[lo + k];
            }
          }
        });
        each_row(g0, [&](int b, int r, i64, int m) {
#pragma unroll
          for (int q = 0; q < QI; ++q) {
            const int c0 = (ln + q * LI) * VW - m;
#pragma unroll
            for (int k = 0; k < VW; ++k)
              if (c0 + k >= 0 && c0 + k < nc)
                tile[(c0 + k) * S + r] = buf[b][q].w[k];
          }
        });
      }
    }
    __syncthreads();
    const int sub = lane / LO, ln = lane % LO;
#pragma unroll
    for (int g = 0; g < GO; ++g) {
      const int c = (g * NW + warp) * (32 / LO) + sub;
      if (c >= nc)
        continue;
      const i64 o0 = (j0 + c) * ld_out + i0;
      const int m = VW > 1 ? static_cast<int>((phase_out + o0) & (VW - 1)) : 0;
#pragma unroll
      for (int q = 0; q < QO; ++q) {
        const int r0 = (ln + q * LO) * VW - m;
        if (r0 >= nr)
          continue;
        store_run<W, VW>(out + o0 + r0, tile + c * S + r0, r0, nr);
      }
    }
  }
};

template <class W, int TI, int TJ, int NT>
__global__ void __launch_bounds__(NT) transpose_wide(WideTile<W, TI, TJ, NT> k, i64 ntiles) {
  extern __shared__ unsigned char wide_smem[];
  W* tile = reinterpret_cast<W*>(wide_smem);
  for (i64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
    k.run(tile, t);
    if (t + gridDim.x < ntiles)
      __syncthreads(); // the next tile's scatter must wait for this tile's gather
  }
}

} // namespace tessera::cuda::detail
