// The comparison kernels of transpose_variants.hpp, dispatched like cuda/transpose.cu's table.
#include "bench/cuda/transpose_launch_extra.cuh"
#include "bench/cuda/transpose_variants.hpp"
#include "cuda/transpose.hpp"

namespace tessera::cuda::bench_ref {

namespace {

using namespace tessera::cuda::detail;

enum Kernel : int {
  kClassic1,
  kClassic2,
  kWide512,
  kWide256,
  kSkinny,
  kTile32,
  kWideFlat,
  kWideTall,
  kScalar64,
  kScalarTall,
  kLean32Square,
  kCount
};

template <int E>
void launch_elem(cudaStream_t s, int kernel, const void* in, void* out, i64 rows, i64 cols,
                 i64 ld_in, i64 ld_out) {
  switch (kernel) {
  case kClassic1:
    return launch_variant<E, 1>(s, in, out, rows, cols, ld_in, ld_out);
  case kClassic2:
    return launch_variant<E, 2>(s, in, out, rows, cols, ld_in, ld_out);
  case kWide512:
    return launch_wide_elem<E, true>(s, in, out, rows, cols, ld_in, ld_out);
  case kWide256:
    return launch_wide_elem<E, false>(s, in, out, rows, cols, ld_in, ld_out);
  case kTile32:
    return launch_scalar_tile<E, 32, 32, 8>(s, in, out, rows, cols, ld_in, ld_out);
  case kScalar64:
    return launch_scalar_tile<E, kScalar64Rows<E>, kScalar64Cols<E>, 1>(s, in, out, rows, cols,
                                                                        ld_in, ld_out);
  case kScalarTall:
    return launch_scalar_tile<E, kScalarTallRows<E>, kScalarTallCols<E>, 1>(s, in, out, rows, cols,
                                                                            ld_in, ld_out);
  case kWideFlat:
    return launch_wide_skew<E, true>(s, in, out, rows, cols, ld_in, ld_out);
  case kWideTall:
    return launch_wide_skew<E, false>(s, in, out, rows, cols, ld_in, ld_out);
  case kLean32Square:
    return launch_lean_tile<E, 32, 32, 1, 16, 16>(s, in, out, rows, cols, ld_in, ld_out);
  default:
    return launch_skinny_elem<E>(s, in, out, rows, cols, ld_in, ld_out);
  }
}

} // namespace

int transpose_comparison_count() {
  return kCount;
}

std::string transpose_comparison_name(DType t, int kernel) {
  const int e = static_cast<int>(dtype_size(t));
  switch (kernel) {
  case kClassic1:
  case kClassic2: {
    const Tile& x = tile_of(e, kernel == kClassic1 ? 1 : 2);
    return "tile " + std::to_string(x.rows) + "x" + std::to_string(x.cols) + "/" +
           std::to_string(x.threads) + "/mb" + std::to_string(x.min_blocks);
  }
  case kWide512:
  case kWide256: {
    const int n = (kernel == kWide512 ? 512 : 256) / e;
    return "wide " + std::to_string(n) + "x" + std::to_string(n);
  }
  case kSkinny:
    return "skinny";
  case kTile32:
    return "tile 32x32/32x8";
  case kScalar64:
    return e < 16 ? "tile 64x64/32x8" : "tile 32x32/32x8/mb1";
  case kScalarTall:
    return e < 16 ? "tile 128x" + std::to_string(256 / e) + "/32x8" : "tile 64x32/32x8";
  case kLean32Square:
    return "lean 32x32/16x16";
  case kWideFlat:
  case kWideTall: {
    const int l = 512 / e, h = std::max(8, 128 / e);
    return "wide " + std::to_string(kernel == kWideFlat ? h : l) + "x" +
           std::to_string(kernel == kWideFlat ? l : h);
  }
  default:
    return "?";
  }
}

void transpose_comparison(CUstream_st* stream, DType t, int kernel, const void* in, void* out,
                          std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                          std::int64_t ld_out) {
  TESSERA_CUDA_REQUIRE(kernel >= 0 && kernel < kCount,
                       "no comparison transpose kernel " + std::to_string(kernel));
  TESSERA_CUDA_REQUIRE(rows >= 0 && cols >= 0 &&
                           (rows == 0 || cols == 0 ||
                            (ld_in >= cols && ld_out >= rows && in && out && in != out &&
                             aligned_to(in, 4) && aligned_to(out, 4))),
                       "comparison transpose of " + shape_str(rows, cols) +
                           ": bad leading dimensions, pointers or alignment");
  const int e = static_cast<int>(dtype_size(t));
  const bool loose = e > 4 && !(aligned_to(in, e) && aligned_to(out, e));
  if (rows == 0 || cols == 0 || loose ||
      (kernel == kSkinny && !skinny_fits(rows, cols, ld_in, ld_out)))
    return cuda::transpose_variant(stream, t, 1, in, out, rows, cols, ld_in, ld_out);
  switch (e) {
  case 4:
    return launch_elem<4>(stream, kernel, in, out, rows, cols, ld_in, ld_out);
  case 8:
    return launch_elem<8>(stream, kernel, in, out, rows, cols, ld_in, ld_out);
  default:
    return launch_elem<16>(stream, kernel, in, out, rows, cols, ld_in, ld_out);
  }
}

} // namespace tessera::cuda::bench_ref
