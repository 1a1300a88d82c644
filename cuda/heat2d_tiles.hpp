// The one-GPU heat2d step with no transposes (the solver's path on one rank when both sides have
// more than two tiles, see solver_cuda.cpp): both directions are solved where the field lies,
// row-major, by the partition method of core/tridiag_partition.hpp with tiles of
// tiles::kTile × kTile cells aligned to the separators of both directions.
//
// One Peaceman–Rachford step, u^n → u^{n+1}, is four kernels:
//   reduced x   the x-lines' separators, a warp per line              (small arrays)
//   half        per tile: r = (I + h_y D_y) u^n, the x interior solves, u*, w = (I + h_x D_x) u*,
//               and the y reduced inputs of w                          (reads u^n)
//   reduced y   the y-lines' separators
//   full        per tile: the half's work again, then the y interior solves, u^{n+1} (written),
//               and the x reduced inputs of the next step's r          (reads u^n, writes u^{n+1})
// The field moves through memory three times a step (24 B per cell, plus the halo rows of the
// tiles and the reduced systems' few values per line and tile), against 104 B for the transposed
// line solves. prepare() makes the x reduced inputs of a state set from outside.
//
// The tile kernels' choice table holds one kernel: the tiles of kTile × kTile cells (all but the
// last row and column of tiles) run code compiled for that size, with the solve tables in shared
// memory and each line's separators loaded before its solve (heat2d_tiles_kernel.cuh). The
// kernels it replaced are the benchmark's (bench/cuda/heat2d_tile_variants.hpp), run through
// set_tile_launcher; all give the same bits.
//
// The solves are not Thomas' operation sequence: the fields agree with the CPU backend to
// rounding (a few ulps per step), not bit for bit; the same state always gives the same bits.
#pragma once

#include <cstdint>

#include "core/backend_fn.hpp"
#include "core/tridiag_partition.hpp"
#include "cuda/buffer.hpp"
#include "cuda/heat2d_tiles_math.hpp"

struct CUstream_st;

namespace tessera::cuda {

// How the reduced systems are solved, the choice table of heat2d_reduced.cu: a warp per line, both
// sweeps as scans over the lanes (heat2d_tiles_reduced.hpp), for lines of at most 32 ×
// tiles::kMaxChunk tiles; one thread per line with the sequential sweeps for longer ones, or
// everywhere with Thread. They agree to rounding.
enum class ReducedSolve { Warp, Thread };
// The solve of the table's rule, or the one TESSERA_KERNEL=heat2d-reduced:warp|thread names (read
// once).
TESSERA_CUDA_FN_OR(ReducedSolve::Warp, ReducedSolve default_reduced());
// Whether `how` runs r by warps.
TESSERA_CUDA_FN_OR(false, bool reduced_by_warps(const tiles::Reduced& r, ReducedSolve how));
// S = the separators of r.lines lines from their reduced inputs P and F (each [r.tiles][r.lines],
// on the device, as are r's tables).
TESSERA_CUDA_FN(void solve_reduced(CUstream_st* stream, const tiles::Reduced& r, const double* P,
                                   const double* F, double* S, ReducedSolve how));
// Loads the kernel solve_reduced(…, r, …, how) launches (CUDA loads kernels lazily, at their first
// launch, otherwise).
TESSERA_CUDA_FN(void load_reduced(const tiles::Reduced& r, ReducedSolve how));

// The part of a step a tile kernel runs: prepare(), half() or full().
enum class TilePhase { Prepare, Half, Full };
// Queues the tile kernel of `phase` over the tiles of `step` on `stream`.
using TileLauncher = void (*)(CUstream_st* stream, TilePhase phase, const tiles::Step& step);

class TiledHeat2d {
public:
  TiledHeat2d() = default;
  // hx, hy = alpha dt / (2 spacing^2); g the Dirichlet boundary value. Needs fits(nx, ny).
  TESSERA_CUDA_FN(TiledHeat2d(std::int64_t nx, std::int64_t ny, double hx, double hy, bool periodic,
                              double g));

  // Both directions have at least three tiles.
  static bool fits(std::int64_t nx, std::int64_t ny) {
    return nx > 2 * tiles::kTile && ny > 2 * tiles::kTile;
  }

  // The x reduced inputs of u (row-major ny × nx): before the first step from a state.
  TESSERA_CUDA_FN(void prepare(CUstream_st* stream, const double* u));
  // One step u → u_next (distinct buffers), after prepare() or a previous step, in two parts:
  // half() queues the reduced x and the half kernel, full() the reduced y and the full kernel.
  TESSERA_CUDA_FN(void half(CUstream_st* stream, const double* u));
  TESSERA_CUDA_FN(void full(CUstream_st* stream, const double* u, double* u_next));

  // Runs the step's tiles with `launch` instead of the library's tile kernel (nullptr: the
  // library's again): the benchmark's comparison kernels, which give the same bits. Loads the
  // library's kernels it chooses, so that the first step does not.
  TESSERA_CUDA_FN(void set_tile_launcher(TileLauncher launch));
  // The reduced solves (default_reduced() unless set); loads the kernels they choose.
  TESSERA_CUDA_FN(void set_reduced(ReducedSolve how));

  // Field traffic in bytes of prepare(), half() and full() (the kernels' reads and writes as
  // counted above).
  TESSERA_CUDA_FN_OR(0.0, double bytes_prepare() const noexcept);
  TESSERA_CUDA_FN_OR(0.0, double bytes_half() const noexcept);
  TESSERA_CUDA_FN_OR(0.0, double bytes_full() const noexcept);

private:
  tiles::Step base_;
  tiles::Reduced rx_, ry_;
  DeviceBuffer tables_, work_;
  double* px_[2] = {nullptr, nullptr};
  double* fx_[2] = {nullptr, nullptr};
  double* sx_ = nullptr; // the x and y separators (work_)
  double* sy_ = nullptr;
  int cur_ = 0;
  TileLauncher launch_ = nullptr; // nullptr: the library's tile kernel
  ReducedSolve reduced_ = ReducedSolve::Warp;
};

} // namespace tessera::cuda
