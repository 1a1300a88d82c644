// Launches of the mapped-memory transpose (cuda/transpose_mapped.cuh).
#include "cuda/transpose_mapped.cuh"
#include "cuda/transpose_mapped.hpp"

namespace tessera::cuda {

namespace detail {
namespace {

template <int E>
void launch_mapped(CUstream_st* s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                   i64 ld_out) {
  using W = typename Word<E>::type;
  using P = MappedTile<W>;
  const i64 tiles_y = (rows + P::kRows - 1) / P::kRows, tiles_x = (cols + P::kCols - 1) / P::kCols;
  TESSERA_CUDA_REQUIRE(tiles_x * tiles_y <= INT_MAX,
                       "cuda::transpose_mapped: " + shape_str(rows, cols) + " has too many tiles");
  // More than 48 KiB of dynamic shared memory needs the kernel's consent, once per device.
  static thread_local int opted = -1;
  int dev = 0;
  CHECK_CUDA(cudaGetDevice(&dev));
  if (opted != dev) {
    CHECK_CUDA(cudaFuncSetAttribute(transpose_mapped_tile<W>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(P::kSmem)));
    opted = dev;
  }
  transpose_mapped_tile<W><<<static_cast<unsigned>(tiles_x * tiles_y), P::kThreads, P::kSmem, s>>>(
      static_cast<const W*>(in), static_cast<W*>(out), rows, cols, ld_in, ld_out,
      static_cast<unsigned>(tiles_y));
  CHECK_CUDA_LAUNCH();
}

} // namespace
} // namespace detail

bool mapped_transpose_fits(DType t, const void* in, const void* out) {
  // Elements move as one word of their size (Word<E>), which for c128 needs 16-byte alignment.
  const std::size_t w = dtype_size(t);
  return detail::aligned_to(in, w) && detail::aligned_to(out, w);
}

void transpose_mapped(CUstream_st* stream, DType t, const void* in, void* out, std::int64_t rows,
                      std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out) {
  TESSERA_CUDA_REQUIRE(rows >= 0 && cols >= 0 && ld_in >= cols && ld_out >= rows,
                       "cuda::transpose_mapped: bad shape or leading dimensions");
  TESSERA_CUDA_REQUIRE(mapped_transpose_fits(t, in, out),
                       "cuda::transpose_mapped: pointers not aligned to the element");
  if (rows == 0 || cols == 0)
    return;
  switch (dtype_size(t)) {
  case 4:
    return detail::launch_mapped<4>(stream, in, out, rows, cols, ld_in, ld_out);
  case 8:
    return detail::launch_mapped<8>(stream, in, out, rows, cols, ld_in, ld_out);
  default:
    return detail::launch_mapped<16>(stream, in, out, rows, cols, ld_in, ld_out);
  }
}

} // namespace tessera::cuda
