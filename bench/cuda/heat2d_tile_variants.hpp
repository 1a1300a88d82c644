// The heat2d tile kernels kept for comparison only: TiledHeat2d::set_tile_launcher runs the step
// with one of them, beside the library's choice table (cuda/heat2d_tiles.cu), which never picks
// them. `shared20`: the library's kernel with registers capped for 20 warps per multiprocessor;
// `constant`: the full tiles' solve tables read from the constant bank; `first`: every tile
// through the size-testing path. All give the library's bits.
#pragma once

#include <string>

#include "core/backend_fn.hpp"
#include "cuda/heat2d_tiles.hpp"

namespace tessera::cuda::bench_ref {

TESSERA_CUDA_FN_OR(0, int heat2d_tile_comparison_count());
// "shared20", "constant" or "first".
TESSERA_CUDA_FN_OR("?", std::string heat2d_tile_comparison_name(int kernel));
// The launcher of comparison kernel `kernel` (0 <= kernel < heat2d_tile_comparison_count()),
// its kernels loaded.
TESSERA_CUDA_FN(TileLauncher heat2d_tile_comparison(int kernel));

} // namespace tessera::cuda::bench_ref
