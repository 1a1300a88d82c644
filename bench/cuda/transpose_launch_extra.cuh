// Host launchers of the transpose kernels kept for comparison only (`tessera bench transpose
// --backend cuda --variants`): the wide-row tiles of aligned 16-byte vectors and the skinny
// kernel (the short side held whole in shared memory). The library's choice table
// (cuda/transpose.cu) never picks them: they lost to the lean tiles on every shape measured
// (docs/performance.md).
#pragma once

#include <algorithm>
#include <cstdint>

#include "bench/cuda/transpose_skinny.cuh"
#include "bench/cuda/transpose_wide.cuh"
#include "cuda/transpose_launch.cuh"

namespace tessera::cuda::detail {

// ---- the wide-row kernel (transpose_wide.cuh) ----

template <class W, int TI, int TJ>
void launch_wide(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                 i64 ld_out) {
  constexpr int kThreads = 256;
  using K = WideTile<W, TI, TJ, kThreads>;
  auto kernel = transpose_wide<W, TI, TJ, kThreads>;
  if (K::kSmemBytes > 48 * 1024)
    CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(K::kSmemBytes)));
  const auto phase = [](const void* p) {
    return static_cast<int>(reinterpret_cast<std::uintptr_t>(p) / sizeof(W) % K::VW);
  };
  const i64 tiles_x = (cols + TJ - 1) / TJ, tiles_y = (rows + TI - 1) / TI;
  const K k{tile_args<W>(in, out, rows, cols, ld_in, ld_out, phase(in), phase(out), tiles_x)};
  const i64 ntiles = tiles_x * tiles_y;
  kernel<<<static_cast<unsigned>(std::min(ntiles, i64{1} << 30)), kThreads, K::kSmemBytes, s>>>(
      k, ntiles);
  CHECK_CUDA_LAUNCH();
}

// Tiles whose rows are 512 bytes (kBig) or 256 bytes.
template <int E, bool kBig>
void launch_wide_elem(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                      i64 ld_out) {
  using W = typename Word<E>::type;
  constexpr int T = (kBig ? 512 : 256) / E;
  launch_wide<W, T, T>(s, in, out, rows, cols, ld_in, ld_out);
}

// Flat tiles (few rows of 512-byte runs: long loads, short stores) and tall ones (the reverse).
template <int E, bool kFlat>
void launch_wide_skew(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                      i64 ld_out) {
  using W = typename Word<E>::type;
  constexpr int kLong = 512 / E, kShort = 128 / E < 8 ? 8 : 128 / E;
  if constexpr (kFlat)
    launch_wide<W, kShort, kLong>(s, in, out, rows, cols, ld_in, ld_out);
  else
    launch_wide<W, kLong, kShort>(s, in, out, rows, cols, ld_in, ld_out);
}

// ---- the skinny kernel (transpose_skinny.cuh) ----

inline constexpr int kSkinnyMax = 32; // the short side the skinny kernel holds whole

// Tall-skinny with contiguous input rows, or short-wide with contiguous output rows.
inline bool skinny_fits(i64 rows, i64 cols, i64 ld_in, i64 ld_out) {
  return (cols <= kSkinnyMax && ld_in == cols) || (rows <= kSkinnyMax && ld_out == rows);
}

template <int E, bool kContigIn>
void launch_skinny(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                   i64 ld_out) {
  constexpr int kThreads = 256;
  using W = typename Word<E>::type;
  using K = SkinnyChunk<W, kThreads, kContigIn>;
  const auto phase = [](const void* p) {
    return static_cast<int>(reinterpret_cast<std::uintptr_t>(p) / sizeof(W) % K::VW);
  };
  const int sh = static_cast<int>(kContigIn ? cols : rows);
  const i64 n = kContigIn ? rows : cols;
  const int L = K::chunk_length(sh);
  const K k{static_cast<const W*>(in),
            static_cast<W*>(out),
            n,
            sh,
            L,
            L + 1,
            K::segment_vectors(L),
            kContigIn ? ld_out : ld_in,
            (rows - 1) * ld_in + cols,
            phase(in),
            phase(out)};
  const std::size_t smem = sizeof(W) * static_cast<std::size_t>(sh) * (L + 1);
  const i64 chunks = (n + L - 1) / L;
  transpose_skinny<W, kThreads, kContigIn>
      <<<static_cast<unsigned>(std::min(chunks, i64{1} << 30)), kThreads, smem, s>>>(k);
  CHECK_CUDA_LAUNCH();
}

template <int E>
void launch_skinny_elem(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                        i64 ld_out) {
  if (cols <= kSkinnyMax && ld_in == cols)
    launch_skinny<E, true>(s, in, out, rows, cols, ld_in, ld_out);
  else
    launch_skinny<E, false>(s, in, out, rows, cols, ld_in, ld_out);
}

} // namespace tessera::cuda::detail
