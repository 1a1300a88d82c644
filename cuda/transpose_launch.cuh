// Host launchers of the transpose kernel families: the classic tiles (transpose_kernel.cuh:
// alignment analysis, tile shape per element size), the scalar and lean scalar tiles. Each
// launches one kernel for a shape with checked arguments. Included by cuda/transpose.cu, which
// chooses among them, and by the benchmark's comparison kernels (bench/cuda/).
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>

#include "cuda/transpose_kernel.cuh"
#include "cuda/transpose_lean_tile.cuh"
#include "cuda/transpose_scalar_tile.cuh"

namespace tessera::cuda::detail {

struct Tile {
  int rows, cols, threads;
  int min_blocks;  // per multiprocessor, for the register allocation (0: the compiler's choice)
  bool persistent; // one block per resident slot walking the tiles, or one block per tile
};

// Classic tile shapes per element size (bytes).
inline constexpr int kClassic = 3;
inline constexpr Tile kTiles4[kClassic] = {
    {64, 64, 256, 4, false}, {128, 64, 256, 2, false}, {64, 64, 256, 5, false}};
inline constexpr Tile kTiles8[kClassic] = {
    {64, 32, 256, 4, false}, {128, 32, 256, 2, false}, {64, 32, 256, 5, false}};
inline constexpr Tile kTiles16[kClassic] = {
    {32, 32, 256, 4, false}, {64, 32, 256, 2, false}, {32, 32, 256, 5, false}};

inline const Tile& tile_of(int elem, int variant) {
  return elem == 4 ? kTiles4[variant] : elem == 8 ? kTiles8[variant] : kTiles16[variant];
}

template <class W>
TileArgs<W> tile_args(const void* in, void* out, i64 rows, i64 cols, i64 ld_in, i64 ld_out,
                      int phase_in, int phase_out, i64 tiles_x) {
  return {static_cast<const W*>(in),
          static_cast<W*>(out),
          rows,
          cols,
          ld_in,
          ld_out,
          (rows - 1) * ld_in + cols,
          phase_in,
          phase_out,
          tiles_x};
}

template <class W, int VW, int TR, int TC, int NT, int MB, bool kIn, bool kOut>
void launch_tiles(cudaStream_t s, const TransposeTile<W, VW, TR, TC, NT, kIn, kOut>& k, i64 ntiles,
                  bool persistent) {
  auto kernel = transpose_tiles<W, VW, TR, TC, NT, MB, kIn, kOut>;
  // Persistent blocks: as many as fit on the device at once (asked once per kernel).
  static const i64 resident = [&] {
    int per_sm = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, NT, 0));
    return static_cast<i64>(std::max(1, per_sm)) * sm_count();
  }();
  const unsigned grid =
      static_cast<unsigned>(std::min(ntiles, persistent ? resident : i64{1} << 30));
  kernel<<<grid, NT, 0, s>>>(k, ntiles);
  CHECK_CUDA_LAUNCH();
}

template <class W, int VW, int TR, int TC, int NT, int MB, bool kIn, bool kOut>
void launch_shape(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                  i64 ld_out, int phase_in, int phase_out, bool persistent) {
  using K = TransposeTile<W, VW, TR, TC, NT, kIn, kOut>;
  const i64 tiles_x = (cols + TC - 1) / TC;
  // Shifted output tiles reach up to kSector - 1 rows past the last multiple of TR.
  const i64 tiles_y = (rows + (kOut ? 0 : K::kSector - 1) + TR - 1) / TR;
  const K k{tile_args<W>(in, out, rows, cols, ld_in, ld_out, phase_in, phase_out, tiles_x)};
  launch_tiles<W, VW, TR, TC, NT, MB>(s, k, tiles_x * tiles_y, persistent);
}

template <class W, int VW, int TR, int TC, int NT, int MB>
void launch(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in, i64 ld_out,
            bool persistent) {
  constexpr int kSector = 32 / static_cast<int>(sizeof(W));
  const auto elem = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) / sizeof(W); };
  // Input: rows read as whole 16-byte vectors when each starts on one. Output: rows written
  // in whole 32-byte sectors when each starts on one.
  const int phase_in = VW > 1 ? static_cast<int>(elem(in) % VW) : 0;
  const int phase_out = static_cast<int>(elem(out) % kSector);
  const bool align_in = phase_in == 0 && (rows == 1 || ld_in % VW == 0);
  const bool align_out = phase_out == 0 && (cols == 1 || ld_out % kSector == 0);
  if (align_in && align_out)
    launch_shape<W, VW, TR, TC, NT, MB, true, true>(s, in, out, rows, cols, ld_in, ld_out, phase_in,
                                                    phase_out, persistent);
  else if (align_in)
    launch_shape<W, VW, TR, TC, NT, MB, true, false>(s, in, out, rows, cols, ld_in, ld_out,
                                                     phase_in, phase_out, persistent);
  else if (align_out)
    launch_shape<W, VW, TR, TC, NT, MB, false, true>(s, in, out, rows, cols, ld_in, ld_out,
                                                     phase_in, phase_out, persistent);
  else
    launch_shape<W, VW, TR, TC, NT, MB, false, false>(s, in, out, rows, cols, ld_in, ld_out,
                                                      phase_in, phase_out, persistent);
}

template <int E, int Variant>
void launch_variant(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                    i64 ld_out) {
  constexpr Tile t = E == 4 ? kTiles4[Variant] : E == 8 ? kTiles8[Variant] : kTiles16[Variant];
  if constexpr (E > 4) {
    if (!(aligned_to(in, E) && aligned_to(out, E))) {
      // Element-aligned only to 4 bytes: whole elements without vectors or sector cuts.
      launch_shape<LooseWord<E>, 1, t.rows, t.cols, t.threads, t.min_blocks, true, true>(
          s, in, out, rows, cols, ld_in, ld_out, 0, 0, t.persistent);
      return;
    }
  }
  launch<typename Word<E>::type, 16 / E, t.rows, t.cols, t.threads, t.min_blocks>(
      s, in, out, rows, cols, ld_in, ld_out, t.persistent);
}

// ---- the scalar-tile kernels (transpose_scalar_tile.cuh) ----

// The large scalar tiles, at most 32 KiB of shared memory each (a block's static shared memory
// is limited to 48 KiB): 64×64 and 128 × 256 bytes; 16-byte elements 32×32 and 64×32.
template <int E>
constexpr int kScalar64Rows = E == 16 ? 32 : 64;
template <int E>
constexpr int kScalar64Cols = E == 16 ? 32 : 64;
template <int E>
constexpr int kScalarTallRows = E == 16 ? 64 : 128;
template <int E>
constexpr int kScalarTallCols = E == 16 ? 32 : 256 / E;

template <int E, int TR, int TC, int kMinBlocks, int BX = 32, int BY = 8>
void launch_scalar_tile(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                        i64 ld_out) {
  using W = typename Word<E>::type;
  const i64 tiles_x = (cols + TC - 1) / TC, tiles_y = (rows + TR - 1) / TR;
  TESSERA_CUDA_REQUIRE(tiles_x <= INT_MAX, "cuda::transpose: " + shape_str(rows, cols) +
                                               " has too many columns for the scalar-tile kernel");
  const dim3 grid(static_cast<unsigned>(tiles_x),
                  static_cast<unsigned>(std::min<i64>(tiles_y, 65535)));
  transpose_scalar_tile<W, TR, TC, BX, BY, kMinBlocks><<<grid, dim3(BX, BY), 0, s>>>(
      static_cast<const W*>(in), static_cast<W*>(out), rows, cols, ld_in, ld_out, tiles_y);
  CHECK_CUDA_LAUNCH();
}

// ---- the lean scalar tiles (transpose_lean_tile.cuh) ----

// A batch (transpose_lean_tile.cuh) runs its matrices along the grid's y dimension, at most
// 65535 at a time.
template <int E, int TR, int TC, int kMinBlocks, int BX = 32, int BY = 8, class Batch = OneMatrix>
void launch_lean_tile(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                      i64 ld_out, const Batch& batch = {}) {
  using W = typename Word<E>::type;
  const i64 tiles_x = (cols + TC - 1) / TC, tiles_y = (rows + TR - 1) / TR;
  TESSERA_CUDA_REQUIRE(tiles_x * tiles_y <= INT_MAX,
                       "cuda::transpose: " + shape_str(rows, cols) +
                           " has too many tiles for the lean scalar-tile kernel");
  unsigned grid_y = 1;
  if constexpr (Batch::kBatched)
    grid_y = static_cast<unsigned>(std::min<i64>(batch.count(), 65535));
  transpose_lean_tile<W, TR, TC, BX, BY, kMinBlocks, Batch>
      <<<dim3(static_cast<unsigned>(tiles_x * tiles_y), grid_y), dim3(BX, BY), 0, s>>>(
          static_cast<const W*>(in), static_cast<W*>(out), rows, cols, ld_in, ld_out,
          static_cast<unsigned>(tiles_y), batch);
  CHECK_CUDA_LAUNCH();
}

} // namespace tessera::cuda::detail
