// The column-piece pack/unpack kernels: blockIdx.y walks the pieces, blockIdx.x the rows of a
// piece, threads its columns (coalesced on both sides).
#include "cuda/launch.cuh"
#include "cuda/pack.hpp"
#include "cuda/transpose_kernel.cuh"

namespace tessera::cuda {

namespace detail {
namespace {

template <class W, bool kPack>
__global__ void column_pieces_kernel(const W* __restrict__ src, W* __restrict__ dst, i64 rows,
                                     i64 ld, const i64* __restrict__ splits, int pieces) {
  for (int q = blockIdx.y; q < pieces; q += gridDim.y) {
    const i64 c0 = splits[q];
    const i64 w = splits[q + 1] - c0;
    const i64 base = rows * c0; // the piece's start in the packed buffer
    for (i64 i = blockIdx.x; i < rows; i += gridDim.x) {
      const W* from = kPack ? src + i * ld + c0 : src + base + i * w;
      W* to = kPack ? dst + base + i * w : dst + i * ld + c0;
      // Four independent loads in flight per thread before the stores.
      for (i64 k0 = threadIdx.x; k0 < w; k0 += 4 * blockDim.x) {
        W x[4];
#pragma unroll
        for (int u = 0; u < 4; ++u)
          if (k0 + u * blockDim.x < w)
            x[u] = from[k0 + u * blockDim.x];
#pragma unroll
        for (int u = 0; u < 4; ++u)
          if (k0 + u * blockDim.x < w)
            to[k0 + u * blockDim.x] = x[u];
      }
    }
  }
}

template <bool kPack>
void launch(cudaStream_t s, DType t, const void* src, void* dst, i64 rows, i64 ld,
            const i64* splits, int pieces) {
  if (rows == 0 || pieces == 0)
    return;
  const dim3 grid(static_cast<unsigned>(std::min<i64>(rows, std::max(1, 4096 / pieces))),
                  static_cast<unsigned>(std::min(pieces, 65535)));
  auto go = [&](auto word) {
    using W = decltype(word);
    column_pieces_kernel<W, kPack><<<grid, 256, 0, s>>>(
        static_cast<const W*>(src), static_cast<W*>(dst), rows, ld, splits, pieces);
  };
  const std::size_t e = dtype_size(t);
  const bool loose = !(aligned_to(src, e) && aligned_to(dst, e));
  if (e == 4)
    go(0u);
  else if (e == 8)
    loose ? go(LooseWord<8>{}) : go(0ull);
  else
    loose ? go(LooseWord<16>{}) : go(uint4{});
  CHECK_CUDA_LAUNCH();
}

void check(const char* what, i64 rows, i64 ld, const void* d_splits, int pieces) {
  TESSERA_CUDA_REQUIRE(rows >= 0 && ld >= 0 && pieces >= 0,
                       std::string("cuda::") + what + ": negative size");
  TESSERA_CUDA_REQUIRE(pieces == 0 || d_splits != nullptr,
                       std::string("cuda::") + what + ": null splits");
}

} // namespace
} // namespace detail

void pack_columns(CUstream_st* stream, DType t, const void* in, std::int64_t rows,
                  std::int64_t ld_in, const std::int64_t* d_splits, int pieces, void* packed) {
  detail::check("pack_columns", rows, ld_in, d_splits, pieces);
  detail::launch<true>(stream, t, in, packed, rows, ld_in,
                       reinterpret_cast<const detail::i64*>(d_splits), pieces);
}

void unpack_columns(CUstream_st* stream, DType t, const void* packed, std::int64_t rows,
                    const std::int64_t* d_splits, int pieces, void* out, std::int64_t ld_out) {
  detail::check("unpack_columns", rows, ld_out, d_splits, pieces);
  detail::launch<false>(stream, t, packed, out, rows, ld_out,
                        reinterpret_cast<const detail::i64*>(d_splits), pieces);
}

} // namespace tessera::cuda
