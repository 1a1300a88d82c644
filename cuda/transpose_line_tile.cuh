// The line-aligned tile transpose kernel: the scalar tile of transpose_scalar_tile.cuh (a TR × TC
// shared tile, 32×8 threads, one element word per access, all of a thread's loads in registers
// before its shared-memory stores), with every warp access realigned to the 128-byte lines of
// the row it reads or writes.
//
// Why: when rows do not start on a 128-byte line (odd leading dimensions, offset sub-blocks),
// each warp access of the plain tile, 32 consecutive elements of one row, straddles a line
// boundary: two lines per access for 4-byte elements (three for 8-byte, five for 16-byte) where
// one (two, four) would hold the data, on the read and on the write side. Here lane l of the
// k-th access to a row segment of n elements (a tile row when loading, a tile column when
// storing) whose first element lies s elements into its line takes element (32k + l - s) mod n
// of the segment. Every access then covers whole aligned lines, except the first, whose lanes
// l < s take the segment's tail and the others its head: the segment's two partial edge lines,
// which the neighbour tiles share. Same accesses per thread, same registers and shared memory
// as the plain tile; only the lane-to-element map changes. Shared-memory banks stay
// conflict-free: the rotation keeps the 32 lanes on 32 consecutive elements modulo n.
//
// Tiles are numbered along the input rows (tile column fastest) and walked grid-stride. With
// one block per tile each block does one; with persistent blocks (as many as fit on the device)
// each block issues the loads of its next tile before writing out the current one, so loads
// stay in flight through its store phase, and the grid has no tail of partly filled waves.
//
// Only the matrix's elements are read or written: every access is checked against the shape.
#pragma once

#include "cuda/launch.cuh"

namespace tessera::cuda::detail {

template <class W, int TR, int TC>
struct LineTile {
  static constexpr int BX = 32, BY = 8, NT = BX * BY;             // threads
  static constexpr int kLine = 128 / static_cast<int>(sizeof(W)); // elements per 128-byte line
  static constexpr int LR = TR / BY, LC = TC / BX;                // load: rows × accesses
  static constexpr int SR = TC / BY, SC = TR / BX;                // store: rows × accesses
  static_assert(TR % BX == 0 && TC % BX == 0, "segments are whole warp accesses");
  static_assert(kLine <= BX, "a segment's shift stays below one access");

  const W* __restrict__ in;
  W* __restrict__ out;
  i64 rows, cols, ld_in, ld_out;
  int line_in, line_out; // element 0 of in and of out within its 128-byte line
  i64 tiles_x, ntiles;

  // The segment element that lane `lane` takes in access k (see above).
  __device__ static int rotated(int k, int lane, int shift, int n) {
    const int e = k * BX + lane - shift;
    return e < 0 ? e + n : e;
  }
  // Elements from the start of the line holding element `offset` of a buffer to that element.
  __device__ static int shift(int line0, i64 offset) {
    return static_cast<int>((line0 + offset) & (kLine - 1));
  }

  __device__ void origin(i64 t, i64& i0, i64& j0) const {
    const i64 ty = t / tiles_x;
    i0 = ty * TR;
    j0 = (t - ty * tiles_x) * TC;
  }

  __device__ void load(i64 i0, i64 j0, W (&v)[LR][LC]) const {
    const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
#pragma unroll
    for (int a = 0; a < LR; ++a) {
      const i64 i = i0 + ty + a * BY;
      if (i >= rows)
        continue;
      const i64 f = i * ld_in + j0;
      const int s = shift(line_in, f);
#pragma unroll
      for (int b = 0; b < LC; ++b) {
        const int c = rotated(b, tx, s, TC);
        if (j0 + c < cols)
          v[a][b] = in[f + c];
      }
    }
  }

  // Values of elements outside the matrix land in the tile too; store() never writes them out.
  __device__ void scatter(W (*tile)[TC + 1], i64 i0, i64 j0, const W (&v)[LR][LC]) const {
    const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
#pragma unroll
    for (int a = 0; a < LR; ++a) {
      const int r = ty + a * BY;
      const int s = shift(line_in, (i0 + r) * ld_in + j0);
#pragma unroll
      for (int b = 0; b < LC; ++b)
        tile[r][rotated(b, tx, s, TC)] = v[a][b];
    }
  }

  __device__ void store(const W (*tile)[TC + 1], i64 i0, i64 j0) const {
    const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
#pragma unroll
    for (int a = 0; a < SR; ++a) {
      const int c = ty + a * BY;
      if (j0 + c >= cols)
        continue;
      const i64 f = (j0 + c) * ld_out + i0;
      const int s = shift(line_out, f);
#pragma unroll
      for (int b = 0; b < SC; ++b) {
        const int r = rotated(b, tx, s, TR);
        if (i0 + r < rows)
          out[f + r] = tile[r][c];
      }
    }
  }
};

// kMinBlocks: blocks per multiprocessor the register allocation must allow.
template <class W, int TR, int TC, int kMinBlocks>
__global__ void __launch_bounds__(LineTile<W, TR, TC>::NT, kMinBlocks)
    transpose_line_tile(const LineTile<W, TR, TC> k) {
  using K = LineTile<W, TR, TC>;
  __shared__ W tile[TR][TC + 1];
  i64 t = blockIdx.x;
  if (t >= k.ntiles)
    return;
  W v[K::LR][K::LC] = {};
  i64 i0 = 0, j0 = 0;
  k.origin(t, i0, j0);
  k.load(i0, j0, v);
  for (;;) {
    k.scatter(tile, i0, j0, v);
    __syncthreads();
    // The next tile's loads fly while this tile is written out.
    const i64 next = t + gridDim.x;
    i64 ni0 = i0, nj0 = j0;
    if (next < k.ntiles) {
      k.origin(next, ni0, nj0);
      k.load(ni0, nj0, v);
    }
    k.store(tile, i0, j0);
    if (next >= k.ntiles)
      break;
    __syncthreads(); // the next scatter waits for this tile's reads of shared memory
    t = next;
    i0 = ni0;
    j0 = nj0;
  }
}

} // namespace tessera::cuda::detail
