// The GPU transpose kernels kept for comparison only: `tessera bench transpose --backend cuda
// --variants` times them beside the library's choice table (cuda/transpose.hpp), which never
// picks them. The classic tile's other shapes, wide tiles of aligned 16-byte vectors (square,
// flat, tall), the skinny kernel, and the checked scalar tiles taken along rows of tiles.
#pragma once

#include <cstdint>
#include <string>

#include "core/backend_fn.hpp"
#include "core/dtype.hpp"

struct CUstream_st;

namespace tessera::cuda::bench_ref {

TESSERA_CUDA_FN_OR(0, int transpose_comparison_count());
// "wide 128x128", "skinny", "tile 64x64/32x8", …
TESSERA_CUDA_FN_OR("?", std::string transpose_comparison_name(DType t, int kernel));
// As cuda::transpose with kernel `kernel` (0 <= kernel < transpose_comparison_count()); a kernel
// that cannot take the layout falls back to the library's classic tile.
TESSERA_CUDA_FN(void transpose_comparison(CUstream_st* stream, DType t, int kernel, const void* in,
                                          void* out, std::int64_t rows, std::int64_t cols,
                                          std::int64_t ld_in, std::int64_t ld_out));

} // namespace tessera::cuda::bench_ref
