// The kernels of the permutation of dimensions (permute.hpp) besides the batched tile transpose
// (transpose_lean_tile.cuh, with the batch below): row copies, and an element-wise walk for the
// batches of transposes too small for tiles.
//
//  - PermuteBatch: the outer dimensions of a batch of rows or matrices, as the lengths and the
//    element strides of input and output; one decomposition of the batch index per row or tile.
//  - permute_rows: the innermost dimension stays. Each block copies a run of kRowRun words of one
//    row (consecutive threads, consecutive words: coalesced loads and stores), blockIdx.y walking
//    the rows. Words are up to 16 bytes wide, as wide as the row length and the pointers allow.
//  - permute_walk: one thread per word of the driving array (the output, or the input),
//    consecutive threads on consecutive words, the other array's offset from the word's
//    coordinates. The side whose innermost dimension is the shorter one drives: its walk visits
//    the other's contiguous runs within a few warps, so both sides are read or written in whole
//    sectors through the L2. Coordinates come from multiplicative division (FastDiv) with 32-bit
//    indices when the array has fewer than 2^32 words, from 64-bit division otherwise.
#pragma once

#include <cstdint>

#include "cuda/launch.cuh"

namespace tessera::cuda::detail {

// The most dimensions the reduced permutation has (max_permute_rank, core/permute_layout.hpp).
inline constexpr int kPermuteDims = 8;

// Outer dimensions, outermost first: batch element q sits at offsets(q) in input and output.
struct PermuteBatch {
  static constexpr bool kBatched = true;
  int dims = 0;
  i64 n = 1;
  i64 length[kPermuteDims - 1] = {}, in_stride[kPermuteDims - 1] = {},
                            out_stride[kPermuteDims - 1] = {};
  __host__ __device__ i64 count() const { return n; }
  __device__ __forceinline__ void offsets(i64 q, i64& off_in, i64& off_out) const {
    off_in = 0;
    off_out = 0;
#pragma unroll
    for (int d = kPermuteDims - 2; d >= 0; --d) {
      if (d < dims) {
        const i64 l = length[d];
        const i64 i = q % l;
        q /= l;
        off_in += i * in_stride[d];
        off_out += i * out_stride[d];
      }
    }
  }
};

// Words of kRowRun per block (256 threads × 4) in the row copies.
inline constexpr int kRowThreads = 256;
inline constexpr int kRowWords = 4;
inline constexpr i64 kRowRun = kRowThreads * kRowWords;

// out row q (at batch offsets, in words) = in row q, `row` words each.
template <class W>
__global__ void __launch_bounds__(kRowThreads)
    permute_rows(const W* __restrict__ in, W* __restrict__ out, i64 row, PermuteBatch batch) {
  const i64 j0 = static_cast<i64>(blockIdx.x) * kRowRun + threadIdx.x;
  for (i64 q = blockIdx.y; q < batch.count(); q += gridDim.y) {
    i64 off_in = 0, off_out = 0;
    batch.offsets(q, off_in, off_out);
    const W* src = in + off_in;
    W* dst = out + off_out;
    W v[kRowWords];
#pragma unroll
    for (int k = 0; k < kRowWords; ++k) {
      const i64 j = j0 + k * kRowThreads;
      if (j < row)
        v[k] = src[j];
    }
#pragma unroll
    for (int k = 0; k < kRowWords; ++k) {
      const i64 j = j0 + k * kRowThreads;
      if (j < row)
        dst[j] = v[k];
    }
  }
}

// n / d and n % d for 32-bit n by one multiply-high (Granlund and Montgomery's round-up method):
// with l = ceil(log2 d) and m = floor(2^32 (2^l - d) / d) + 1, n / d = (umulhi(n, m) + n) >> l
// for every 32-bit n (the sum taken in 64 bits).
struct FastDiv {
  std::uint32_t d = 1, m = 1;
  int l = 0;
  FastDiv() = default;
  explicit FastDiv(std::uint32_t divisor) : d(divisor) {
    while ((std::uint64_t{1} << l) < divisor)
      ++l;
    m = static_cast<std::uint32_t>(
            ((std::uint64_t{1} << 32) * ((std::uint64_t{1} << l) - divisor)) / divisor) +
        1;
  }
  __device__ __forceinline__ std::uint32_t div(std::uint32_t n) const {
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(__umulhi(n, m)) + n) >> l);
  }
};

// The walk over the driving array's words: `dims` dimensions of `length` (outermost first), the
// other array's word strides per dimension. I: std::uint32_t (every offset of both arrays below
// 2^32) or i64.
template <class I>
struct PermuteWalk {
  int dims = 0;
  I total = 0;
  I length[kPermuteDims] = {}, other_stride[kPermuteDims] = {};
  FastDiv div[kPermuteDims] = {};

  // The other array's offset of the driving array's word e.
  __device__ __forceinline__ I other(I e) const {
    I off = 0;
#pragma unroll
    for (int d = kPermuteDims - 1; d > 0; --d) {
      if (d < dims) {
        I q;
        if constexpr (sizeof(I) == 4)
          q = div[d].div(e);
        else
          q = e / length[d];
        off += (e - q * length[d]) * other_stride[d];
        e = q;
      }
    }
    return off + e * other_stride[0];
  }
};

inline constexpr int kWalkThreads = 256;
inline constexpr int kWalkWords = 4; // per thread, kWalkThreads apart

// kOutDrives: out[e] = in[other(e)], else out[other(e)] = in[e], for every word e of the walk.
template <class W, class I, bool kOutDrives>
__global__ void __launch_bounds__(kWalkThreads)
    permute_walk(const W* __restrict__ in, W* __restrict__ out, PermuteWalk<I> walk) {
  const i64 stride = static_cast<i64>(gridDim.x) * kWalkThreads * kWalkWords;
  for (i64 base = static_cast<i64>(blockIdx.x) * kWalkThreads * kWalkWords + threadIdx.x;
       base < static_cast<i64>(walk.total); base += stride) {
    W v[kWalkWords];
    I other[kWalkWords];
#pragma unroll
    for (int k = 0; k < kWalkWords; ++k) {
      const i64 e = base + k * kWalkThreads;
      if (e < static_cast<i64>(walk.total)) {
        other[k] = walk.other(static_cast<I>(e));
        v[k] = kOutDrives ? in[other[k]] : in[e];
      }
    }
#pragma unroll
    for (int k = 0; k < kWalkWords; ++k) {
      const i64 e = base + k * kWalkThreads;
      if (e < static_cast<i64>(walk.total)) {
        if constexpr (kOutDrives)
          out[e] = v[k];
        else
          out[other[k]] = v[k];
      }
    }
  }
}

} // namespace tessera::cuda::detail
