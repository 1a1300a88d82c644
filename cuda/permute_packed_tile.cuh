// The batched tile transpose for 1- and 2-byte elements (the permutation's u8/i8 and i16/u16
// data), moved as 32-bit words of P = 4 / E elements on both sides. One element per thread and
// access, as the scalar tiles do, leaves three quarters (bytes) or half (shorts) of each memory
// transaction's width unused (docs/performance.md, "Permutations of dimensions on one GPU").
//
// A tile is G·P rows by 32·P elements, so that one warp moves a 128-byte run of an input row,
// and whole 128-byte runs of output rows. Each thread loads P words from P consecutive input rows
// at one word column: a P × P block of elements, transposed in registers (__byte_perm) into P words
// of P consecutive output rows. Those go to shared memory as words (no byte-wide shared accesses),
// with the word column XOR-swizzled by the row's word index so that both the writes (one word
// column of P·32 rows) and the reads (one output row's 32 words) hit 32 different banks. Then each
// warp writes whole 128-byte runs of output rows.
//
// Needs rows, cols, both leading dimensions and every batch stride to be multiples of P, and
// 4-byte aligned pointers (permute.cu checks and otherwise takes the scalar tiles): a word then
// lies wholly inside or wholly outside the matrix, so that edge tiles check words, not elements.
#pragma once

#include "cuda/launch.cuh"

namespace tessera::cuda::detail {

// P elements per word; G row groups of P rows per tile (32: tiles of 128 × 128 bytes, 64 × 64
// shorts).
template <int P, int G = 32>
struct PackedTile {
  static_assert(P == 2 || P == 4, "bytes (4 per word) or shorts (2 per word)");
  static_assert(G % 32 == 0, "whole warps of word columns on the output side");
  static constexpr int E = 4 / P;      // bytes per element
  static constexpr int TR = G * P;     // tile rows (input), elements
  static constexpr int TC = 32 * P;    // tile columns (input), elements: a warp's 32 words
  static constexpr int kThreads = 256; // 8 warps
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kLoadsPerWarp = G / kWarps;   // row groups per warp
  static constexpr int kStoresPerWarp = TC / kWarps; // output rows per warp
  static constexpr int kRuns = G / 32;               // 32-word runs per output row
};

// The P × P block transposed: word r holds input row r's P elements; word c of the result holds
// output row c's (element r of it from input row r).
__device__ __forceinline__ void transpose_block(const unsigned (&a)[4], unsigned (&o)[4]) {
  const unsigned t0 = __byte_perm(a[0], a[1], 0x5140), t1 = __byte_perm(a[0], a[1], 0x7362);
  const unsigned t2 = __byte_perm(a[2], a[3], 0x5140), t3 = __byte_perm(a[2], a[3], 0x7362);
  o[0] = __byte_perm(t0, t2, 0x5410);
  o[1] = __byte_perm(t0, t2, 0x7632);
  o[2] = __byte_perm(t1, t3, 0x5410);
  o[3] = __byte_perm(t1, t3, 0x7632);
}
__device__ __forceinline__ void transpose_block(const unsigned (&a)[2], unsigned (&o)[2]) {
  o[0] = __byte_perm(a[0], a[1], 0x5410);
  o[1] = __byte_perm(a[0], a[1], 0x7632);
}

// Tile t (of tiles_y per column of tiles, as transpose_lean_tile.cuh orders them) of the matrix
// at in, out (byte pointers): out[c*ld_out + r] = in[r*ld_in + c], in elements.
template <int P, int G>
__device__ __forceinline__ void packed_tile(const unsigned char* __restrict__ in,
                                            unsigned char* __restrict__ out, i64 rows, i64 cols,
                                            i64 ld_in, i64 ld_out, unsigned t, unsigned tiles_y) {
  using K = PackedTile<P, G>;
  __shared__ unsigned tile[K::TC][K::TR / P]; // output rows × their words
  const unsigned bx = t / tiles_y, by = t % tiles_y;
  const i64 i0 = static_cast<i64>(by) * K::TR, j0 = static_cast<i64>(bx) * K::TC;
  const bool interior = i0 + K::TR <= rows && j0 + K::TC <= cols;
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;

  unsigned v[K::kLoadsPerWarp][P];
  const i64 j = j0 + static_cast<i64>(lane) * P; // the first element of this thread's word column
#pragma unroll
  for (int k = 0; k < K::kLoadsPerWarp; ++k)
#pragma unroll
    for (int r = 0; r < P; ++r) {
      const i64 i = i0 + static_cast<i64>(warp + k * K::kWarps) * P + r;
      v[k][r] = 0;
      if (interior || (i < rows && j < cols))
        v[k][r] = *reinterpret_cast<const unsigned*>(in + (i * ld_in + j) * K::E);
    }
#pragma unroll
  for (int k = 0; k < K::kLoadsPerWarp; ++k) {
    const int g = warp + k * K::kWarps; // the output rows' word column
    unsigned o[P];
    transpose_block(v[k], o);
#pragma unroll
    for (int c = 0; c < P; ++c) // output row lane·P + c, its swizzle (row / P) = lane
      tile[lane * P + c][g ^ lane] = o[c];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K::kStoresPerWarp; ++k) {
    const int jl = warp + k * K::kWarps;
    const i64 jo = j0 + jl;
#pragma unroll
    for (int run = 0; run < K::kRuns; ++run) {
      const int q = lane + 32 * run;               // the output row's word
      const i64 io = i0 + static_cast<i64>(q) * P; // its first element
      const unsigned w = tile[jl][q ^ (jl / P)];
      if (interior || (jo < cols && io < rows))
        *reinterpret_cast<unsigned*>(out + (jo * ld_out + io) * K::E) = w;
    }
  }
}

// Batch: a PermuteBatch (permute_kernels.cuh): count() matrices at element offsets offsets(b).
// blockIdx.x is the tile within a matrix, blockIdx.y walks the batch (stepping by gridDim.y).
template <int P, int G, class Batch>
__global__ void __launch_bounds__(PackedTile<P, G>::kThreads)
    permute_packed_tile(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                        i64 rows, i64 cols, i64 ld_in, i64 ld_out, unsigned tiles_y, Batch batch) {
  constexpr int E = PackedTile<P, G>::E;
  for (i64 b = blockIdx.y; b < batch.count(); b += gridDim.y) {
    if (b != blockIdx.y)
      __syncthreads(); // the previous matrix's reads of the shared tile are done
    i64 off_in = 0, off_out = 0;
    batch.offsets(b, off_in, off_out);
    packed_tile<P, G>(in + off_in * E, out + off_out * E, rows, cols, ld_in, ld_out, blockIdx.x,
                      tiles_y);
  }
}

} // namespace tessera::cuda::detail
