// The comparison tile kernels of heat2d_tile_variants.hpp, over the library's phases
// (cuda/heat2d_tiles_kernel.cuh).
#include "bench/cuda/heat2d_tile_variants.hpp"
#include "cuda/heat2d_tiles_kernel.cuh"

namespace tessera::cuda::bench_ref {

namespace {

using namespace tessera::cuda::detail;

// One warp per tile, every tile through any_tile (the first version of the step).
template <Mode kMode>
__global__ void __launch_bounds__(32 * kTileWarps, kTileBlocksPerSm)
    first_tile_kernel(const tiles::Step s) {
  __shared__ double smem[kTileWarps][tiles::kTile * tiles::kPitch];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const tiles::i64 id = static_cast<tiles::i64>(blockIdx.x) * kTileWarps + warp;
  if (id >= static_cast<tiles::i64>(s.x.tiles) * s.y.tiles)
    return; // the whole warp
  any_tile<kMode>(s, static_cast<int>(id / s.x.tiles), static_cast<int>(id % s.x.tiles), lane,
                  smem[warp]);
}

enum Kernel : int { kShared20, kConstant, kFirst, kCount };

using TileKernelFn = void (*)(tiles::Step);
template <Mode kMode>
TileKernelFn kernel_for(int kernel) {
  switch (kernel) {
  case kShared20:
    return fixed_tile_kernel<kMode, true, kTileBlocksPerSm + 1>;
  case kConstant:
    return fixed_tile_kernel<kMode, false, kTileBlocksPerSm>;
  default:
    return first_tile_kernel<kMode>;
  }
}

TileKernelFn kernel_for(int kernel, TilePhase phase) {
  switch (phase) {
  case TilePhase::Prepare:
    return kernel_for<TilePhase::Prepare>(kernel);
  case TilePhase::Half:
    return kernel_for<TilePhase::Half>(kernel);
  case TilePhase::Full:
    break;
  }
  return kernel_for<TilePhase::Full>(kernel);
}

template <int K>
void launch(CUstream_st* stream, TilePhase phase, const tiles::Step& s) {
  launch_tile_kernel(stream, kernel_for(K, phase), s);
}

} // namespace

int heat2d_tile_comparison_count() {
  return kCount;
}

std::string heat2d_tile_comparison_name(int kernel) {
  switch (kernel) {
  case kShared20:
    return "shared20";
  case kConstant:
    return "constant";
  case kFirst:
    return "first";
  default:
    return "?";
  }
}

TileLauncher heat2d_tile_comparison(int kernel) {
  TESSERA_CUDA_REQUIRE(kernel >= 0 && kernel < kCount,
                       "no comparison heat2d tile kernel " + std::to_string(kernel));
  for (TilePhase phase : {TilePhase::Prepare, TilePhase::Half, TilePhase::Full})
    load_tile_kernel(kernel_for(kernel, phase));
  switch (kernel) {
  case kShared20:
    return launch<kShared20>;
  case kConstant:
    return launch<kConstant>;
  default:
    return launch<kFirst>;
  }
}

} // namespace tessera::cuda::bench_ref
