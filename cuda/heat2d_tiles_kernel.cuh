// The tile kernels of the one-GPU heat2d step (heat2d_tiles.hpp): one warp per tile, running
// heat2d_tiles_math.hpp's phases with a __syncwarp() between them. Included by
// cuda/heat2d_tiles.cu, whose choice table launches fixed_tile_kernel with the solve tables in
// shared memory, and by the benchmark's comparison kernels (bench/cuda/heat2d_tile_variants.cu).
#pragma once

#include "cuda/heat2d_tiles.hpp"
#include "cuda/launch.cuh"

namespace tessera::cuda::detail {

inline constexpr int kTileWarps = 4;       // tiles per block
inline constexpr int kTileBlocksPerSm = 4; // registers capped for 16 warps per multiprocessor

using Mode = TilePhase;

// The phases of one tile in the order of kMode, the x and y pieces px, py.
template <Mode kMode, class PX, class PY, class B>
__device__ __forceinline__ void run_tile(const tiles::Step& s, const PX& px, const PY& py,
                                         const B& b, int lane, double* R) {
  tiles::phase_rhs(s, b, lane, R);
  __syncwarp();
  if constexpr (kMode == Mode::Prepare) {
    tiles::phase_reduced_x(s, px, b, lane, R);
    return;
  }
  tiles::phase_solve_x(s, px, b, lane, R);
  __syncwarp();
  if constexpr (kMode == Mode::Half) {
    tiles::phase_reduced_y(s, py, b, lane, R);
    return;
  }
  tiles::phase_solve_y(s, py, b, lane, R);
  __syncwarp();
  tiles::phase_reduced_x(s, px, b, lane, R);
}

// A tile of any size, its pieces chosen position by position: the path of the last row and
// column of tiles (and, in the benchmark's `first` kernel, of every tile).
template <Mode kMode>
__device__ __forceinline__ void any_tile(const tiles::Step& s, int ty, int tx, int lane,
                                         double* R) {
  const tiles::TileBox b = tiles::tile_box(s, ty, tx);
  tiles::phase_rhs(s, b, lane, R);
  __syncwarp();
  if constexpr (kMode == Mode::Prepare) {
    tiles::reduced_x(s, b, lane, R);
    return;
  }
  tiles::solve_x(s, b, lane, R);
  __syncwarp();
  if constexpr (kMode == Mode::Half) {
    tiles::reduced_y(s, b, lane, R);
    return;
  }
  tiles::solve_y(s, b, lane, R);
  __syncwarp();
  tiles::reduced_x(s, b, lane, R);
}
// The same, not inlined, so that its registers and spills stay out of the fixed-size path; the
// step is the kernel's __grid_constant__ parameter, read where it lies.
template <Mode kMode>
__device__ __noinline__ void edge_tile(const tiles::Step& s, int ty, int tx, int lane, double* R) {
  any_tile<kMode>(s, ty, tx, lane, R);
}

// One warp per tile: the tiles of kTile × kTile cells (all but the last row and column of tiles)
// through a path compiled for that size, straight-line code with no per-position tests. Tables:
// the full tiles' solve tables read from shared memory (kShared) or from the parameters' constant
// bank. kBlocks blocks per multiprocessor: the register cap.
template <Mode kMode, bool kShared, int kBlocks>
__global__ void __launch_bounds__(32 * kTileWarps, kBlocks)
    fixed_tile_kernel(const __grid_constant__ tiles::Step s) {
  __shared__ double smem[kTileWarps][tiles::kTile * tiles::kPitch];
  __shared__ __align__(16) double table[2][tiles::kSharedTable];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  if constexpr (kShared) {
    if (warp < 2 && lane < tiles::kTile - 1)
      tiles::share_table(warp == 0 ? s.x.full : s.y.full, table[warp], lane);
    __syncthreads();
  }
  const tiles::i64 id = static_cast<tiles::i64>(blockIdx.x) * kTileWarps + warp;
  if (id >= static_cast<tiles::i64>(s.x.tiles) * s.y.tiles)
    return; // the whole warp
  const int ty = static_cast<int>(id / s.x.tiles), tx = static_cast<int>(id % s.x.tiles);
  double* R = smem[warp];
  if (ty + 1 < s.y.tiles && tx + 1 < s.x.tiles) {
    if constexpr (kShared)
      run_tile<kMode>(s, tiles::SharedPiece(s.x.full, table[0]),
                      tiles::SharedPiece(s.y.full, table[1]), tiles::full_box(ty, tx), lane, R);
    else
      run_tile<kMode>(s, tiles::FixedPiece(s.x.full), tiles::FixedPiece(s.y.full),
                      tiles::full_box(ty, tx), lane, R);
  } else {
    edge_tile<kMode>(s, ty, tx, lane, R);
  }
}

// Blocks of kTileWarps tiles over the step's tiles.
inline unsigned tile_blocks(const tiles::Step& s) {
  const tiles::i64 n = static_cast<tiles::i64>(s.x.tiles) * s.y.tiles;
  return static_cast<unsigned>((n + kTileWarps - 1) / kTileWarps);
}

// Launches a tile kernel (all take the step by value) over the step's tiles.
inline void launch_tile_kernel(CUstream_st* stream, void (*kernel)(tiles::Step),
                               const tiles::Step& s) {
  kernel<<<tile_blocks(s), 32 * kTileWarps, 0, stream>>>(s);
  CHECK_CUDA_LAUNCH();
}

// CUDA loads a kernel at its first launch (lazy loading, the default): milliseconds that would
// land in the first step and, in a short run, in its time per step. Asking for a kernel's
// attributes loads it now.
inline void load_tile_kernel(void (*kernel)(tiles::Step)) {
  cudaFuncAttributes a{};
  CHECK_CUDA(cudaFuncGetAttributes(&a, kernel));
}

} // namespace tessera::cuda::detail
