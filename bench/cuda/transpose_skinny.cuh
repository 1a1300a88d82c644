// The skinny transpose kernel: one side of the matrix ("short", at most 32) held whole.
//
// Tall-skinny input (cols = sh <= 32, ld_in = sh) is one contiguous run of elements; its
// transpose is sh output rows. Short-wide input (rows = sh <= 32) is sh input rows whose
// transpose (ld_out = sh) is one contiguous run. A block takes a chunk of L consecutive
// positions b along the long side: the contiguous side is the run of L*sh elements
// k = b*sh + a (a: position along the short side), the other side is sh segments of L
// elements (segment a at a*ld_seg + b0). Both sides move as aligned 16-byte vectors over
// consecutive threads (whole runs of 512 bytes per warp instruction, whatever the alignment);
// vectors that stick out of the chunk are moved element by element, and no byte outside the
// matrix is read or written. Shared memory holds the chunk as smem[a][b].
#pragma once

#include "cuda/launch.cuh"
#include "cuda/transpose_kernel.cuh"

namespace tessera::cuda::detail {

template <class W, int NT, bool kContigIn>
struct SkinnyChunk {
  static constexpr int E = static_cast<int>(sizeof(W));
  static constexpr int VW = 16 / E;
  static constexpr int kElems = 32768 / E; // chunk elements (32 KiB of shared memory)
  static constexpr int kVecs = (kElems / VW + NT - 1) / NT; // contiguous-side vectors per thread
  static constexpr int kSegVecs = (kElems / VW + 64 + NT - 1) / NT; // segment-side, per thread
  using V = Vec<W, VW>;

  const W* __restrict__ in;
  W* __restrict__ out;
  i64 n;      // long side
  int sh;     // short side (1 … 32)
  int L;      // chunk length along the long side; L*sh + VW <= kElems
  int SL;     // shared stride of smem[a][.]: L + 1
  int nseg;   // vectors per segment slot: a segment of L starting mid-vector spans them
  i64 ld_seg; // leading dimension of the segment side (ld_out or ld_in)
  i64 span;   // elements of the input's memory span
  int phase_in, phase_out;

  static int chunk_length(int sh) { return (kElems - VW) / sh; }
  static int segment_vectors(int L) { return (L + 2 * VW - 2) / VW; }

  // The contiguous side of chunk [b0, b0 + nb): elements base + b0*sh + k, k < nb*sh.
  __device__ void contiguous(W* tile, i64 b0, int nb) const {
    const i64 base = b0 * sh;
    const int total = nb * sh;
    const int m =
        VW > 1 ? static_cast<int>(((kContigIn ? phase_in : phase_out) + base) & (VW - 1)) : 0;
    V buf[kVecs];
    if constexpr (kContigIn) {
#pragma unroll
      for (int it = 0; it < kVecs; ++it) {
        const int k0 = (static_cast<int>(threadIdx.x) + it * NT) * VW - m;
        if (k0 >= total)
          continue;
        const i64 lo = base + k0;
        if (lo >= 0 && lo + VW <= span) {
          buf[it] = *reinterpret_cast<const V*>(in + lo);
        } else {
#pragma unroll
          for (int k = 0; k < VW; ++k)
            if (k0 + k >= 0 && k0 + k < total)
              buf[it].w[k] = in[lo + k];
        }
      }
    }
#pragma unroll
    for (int it = 0; it < kVecs; ++it) {
      const int k0 = (static_cast<int>(threadIdx.x) + it * NT) * VW - m;
      if (k0 >= total)
        continue;
      const int kf = k0 < 0 ? 0 : k0;
      int b = kf / sh, a = kf - b * sh;
#pragma unroll
      for (int k = 0; k < VW; ++k) {
        if (k0 + k >= kf && k0 + k < total) {
          if constexpr (kContigIn)
            tile[a * SL + b] = buf[it].w[k];
          else
            buf[it].w[k] = tile[a * SL + b];
          if (++a == sh) {
            a = 0;
            ++b;
          }
        }
      }
      if constexpr (!kContigIn) {
        W* dst = out + base + k0;
        if (k0 >= 0 && k0 + VW <= total) {
          *reinterpret_cast<V*>(dst) = buf[it];
        } else {
#pragma unroll
          for (int k = 0; k < VW; ++k)
            if (k0 + k >= 0 && k0 + k < total)
              dst[k] = buf[it].w[k];
        }
      }
    }
  }

  // The segment side: segment a holds chunk positions [b0, b0 + nb) at a*ld_seg + b0.
  __device__ void segments(W* tile, i64 b0, int nb) const {
    const int items = sh * nseg;
    int a = static_cast<int>(threadIdx.x) / nseg, u = static_cast<int>(threadIdx.x) - a * nseg;
    const int da = NT / nseg, du = NT - da * nseg;
    V buf[kSegVecs];
    int pos[kSegVecs]; // first local position b of the vector, or INT_MIN when idle
#pragma unroll
    for (int it = 0; it < kSegVecs; ++it) {
      pos[it] = INT_MIN;
      if (a * nseg + u < items) {
        const i64 s0 = a * ld_seg + b0;
        const int m =
            VW > 1 ? static_cast<int>(((kContigIn ? phase_out : phase_in) + s0) & (VW - 1)) : 0;
        const int c0 = u * VW - m;
        if (c0 < nb) {
          pos[it] = c0;
          if constexpr (!kContigIn) {
            const i64 lo = s0 + c0;
            if (lo >= 0 && lo + VW <= span) {
              buf[it] = *reinterpret_cast<const V*>(in + lo);
            } else {
#pragma unroll
              for (int k = 0; k < VW; ++k)
                if (c0 + k >= 0 && c0 + k < nb)
                  buf[it].w[k] = in[lo + k];
            }
          }
        }
      }
      u += du;
      a += da;
      if (u >= nseg) {
        u -= nseg;
        ++a;
      }
    }
    a = static_cast<int>(threadIdx.x) / nseg;
    u = static_cast<int>(threadIdx.x) - a * nseg;
#pragma unroll
    for (int it = 0; it < kSegVecs; ++it) {
      const int c0 = pos[it];
      if (c0 != INT_MIN) {
#pragma unroll
        for (int k = 0; k < VW; ++k)
          if (c0 + k >= 0 && c0 + k < nb) {
            if constexpr (kContigIn)
              buf[it].w[k] = tile[a * SL + c0 + k];
            else
              tile[a * SL + c0 + k] = buf[it].w[k];
          }
        if constexpr (kContigIn) {
          W* dst = out + a * ld_seg + b0 + c0;
          if (c0 >= 0 && c0 + VW <= nb) {
            *reinterpret_cast<V*>(dst) = buf[it];
          } else {
#pragma unroll
            for (int k = 0; k < VW; ++k)
              if (c0 + k >= 0 && c0 + k < nb)
                dst[k] = buf[it].w[k];
          }
        }
      }
      u += du;
      a += da;
      if (u >= nseg) {
        u -= nseg;
        ++a;
      }
    }
  }
};

template <class W, int NT, bool kContigIn>
__global__ void __launch_bounds__(NT) transpose_skinny(SkinnyChunk<W, NT, kContigIn> k) {
  extern __shared__ unsigned char skinny_smem[];
  W* tile = reinterpret_cast<W*>(skinny_smem);
  const i64 chunks = (k.n + k.L - 1) / k.L;
  for (i64 c = blockIdx.x; c < chunks; c += gridDim.x) {
    const i64 b0 = c * k.L;
    const int nb = static_cast<int>(min(static_cast<i64>(k.L), k.n - b0));
    if constexpr (kContigIn)
      k.contiguous(tile, b0, nb);
    else
      k.segments(tile, b0, nb);
    __syncthreads();
    if constexpr (kContigIn)
      k.segments(tile, b0, nb);
    else
      k.contiguous(tile, b0, nb);
    __syncthreads();
  }
}

} // namespace tessera::cuda::detail
