// The transpose of a matrix in pinned host memory into pinned host memory by the GPU's own
// loads and stores over the link (both mapped into the device's address space): no copies, no
// device memory. The link carries both directions at once, so there is no pipeline to fill or
// drain; what decides the speed is how the accesses cross it. On an H200 (bench/RESULTS.md):
// reads of 1 KiB runs of an input row moved 1 GiB in 20.9 ms alone, but 256-byte runs took three
// times as long (4-byte elements); the stores keep their rate (20.4 ms) with 256-byte runs. So a
// tile is TR = 64 input rows of 1 KiB, read by 16-byte loads (one warp a row, one 512-byte run
// per instruction), with the elements before the first and after the last 16-byte boundary of
// a row read one by one (any column count, any base); the output rows get runs of 64 elements.
//
// One block per tile from a one-dimensional grid, consecutive blocks down a column of tiles (as
// the lean tiles of device memory): the blocks resident at one time write long runs of the same
// output rows. The tile lives in dynamic shared memory (64 rows of 1 KiB plus one element).
#pragma once

#include "cuda/transpose_kernel.cuh"
#include "cuda/transpose_mapped.hpp"

namespace tessera::cuda::detail {

template <class W>
struct MappedTile {
  static constexpr int kRows = static_cast<int>(kMappedTileRows);
  static constexpr int kCols = static_cast<int>(kMappedRowRunBytes / sizeof(W));
  static constexpr int kThreads = 256;                                  // 8 warps
  static constexpr int kVec = 16 / static_cast<int>(sizeof(W));         // elements per load
  static constexpr std::size_t kSmem = sizeof(W) * kRows * (kCols + 1); // padded rows
};

template <class W>
__global__ void __launch_bounds__(MappedTile<W>::kThreads)
    transpose_mapped_tile(const W* __restrict__ in, W* __restrict__ out, i64 rows, i64 cols,
                          i64 ld_in, i64 ld_out, unsigned tiles_y) {
  using P = MappedTile<W>;
  constexpr int kWarps = P::kThreads / 32, V = P::kVec, TC = P::kCols + 1;
  extern __shared__ uint4 smem_words[]; // uint4: aligned for every element word
  W* tile = reinterpret_cast<W*>(smem_words);
  const unsigned t = blockIdx.x;
  const i64 i0 = static_cast<i64>(t % tiles_y) * P::kRows;
  const i64 j0 = static_cast<i64>(t / tiles_y) * P::kCols;
  const int nr = static_cast<int>(rows - i0 < P::kRows ? rows - i0 : P::kRows);
  const int nc = static_cast<int>(cols - j0 < P::kCols ? cols - j0 : P::kCols);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  for (int r = warp; r < nr; r += kWarps) {
    const W* src = in + (i0 + r) * ld_in + j0;
    // Elements before the first 16-byte boundary, whole vectors, then the rest.
    const int mis = static_cast<int>(reinterpret_cast<std::uintptr_t>(src) / sizeof(W) % V);
    const int head = min(nc, (V - mis) % V);
    const int nv = (nc - head) / V;
    const int tail = nc - head - nv * V;
    const auto* vsrc = reinterpret_cast<const uint4*>(src + head);
    W* row = tile + r * TC;
    uint4 v0 = {}, v1 = {};
    const bool has0 = lane < nv, has1 = lane + 32 < nv; // a row has at most 64 vectors
    if (has0)
      v0 = vsrc[lane];
    if (has1)
      v1 = vsrc[lane + 32];
    if (lane < head)
      row[lane] = src[lane];
    else if (lane < head + tail)
      row[nv * V + lane] = src[nv * V + lane];
    if (has0) {
      const W* w = reinterpret_cast<const W*>(&v0);
#pragma unroll
      for (int u = 0; u < V; ++u)
        row[head + lane * V + u] = w[u];
    }
    if (has1) {
      const W* w = reinterpret_cast<const W*>(&v1);
#pragma unroll
      for (int u = 0; u < V; ++u)
        row[head + (lane + 32) * V + u] = w[u];
    }
  }
  __syncthreads();
  // Output row j0 + c holds tile column c: one warp a row, consecutive lanes consecutive
  // elements (the padding puts them in distinct banks).
  for (int c = warp; c < nc; c += kWarps) {
    W* dst = out + (j0 + c) * ld_out + i0;
    for (int r = lane; r < nr; r += 32)
      dst[r] = tile[r * TC + c];
  }
}

} // namespace tessera::cuda::detail
