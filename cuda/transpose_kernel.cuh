// The tiled shared-memory transpose kernel (see transpose.hpp for what it computes).
//
// Persistent blocks walk the TR × TC tiles of the input (grid-stride), software-pipelined: the
// global loads of the next tile are issued before the current tile is written out, so every
// block keeps loads in flight through its store phase.
//
//   load:  the tile's input rows are read as 16-byte vectors aligned in the address space (a row
//          that starts mid-vector is read from the vector holding its first element; kAlignIn =
//          false adds one vector per row for that shift). Each element goes to
//          smem[col][row], the output orientation.
//   store: each output row of the tile is gathered from shared memory and written as aligned
//          16-byte vectors.
//
// Output rows that do not start on a 32-byte sector (kAlignOut = false: odd leading dimensions,
// offset pointers) would leave a partially written sector at every tile edge, shared by two
// blocks, and partial sectors cost the memory a read-modify-write. So tile boundaries are cut
// per output row at sector boundaries instead: output row j of tile row ty holds input rows
// [ty*TR - m_j, ty*TR + TR - m_j), m_j < kSector chosen so the first element starts a sector.
// Every sector of the output is then written whole by one block; the tile reads kSector halo
// rows above its own (only the elements that belong to it).
//
// Vectors that stick out of the matrix are read or written element by element: no byte outside
// the matrix is touched. Words of the element's size (4, 8 or 16 bytes) are moved, never
// interpreted, so complex types move as one word.
//
// Lanes map 8 vectors along a row × 4 rows: a warp instruction covers four 128-byte row pieces,
// and the odd row stride of the shared tile spreads a warp's element accesses over the banks.
#pragma once

#include <climits>

#include "cuda/launch.cuh"

namespace tessera::cuda::detail {

template <int E>
struct Word;
template <>
struct Word<1> { // the permutation's 1- and 2-byte elements (cuda/permute.cu)
  using type = unsigned char;
};
template <>
struct Word<2> {
  using type = unsigned short;
};
template <>
struct Word<4> {
  using type = unsigned int;
};
template <>
struct Word<8> {
  using type = unsigned long long;
};
template <>
struct Word<16> {
  using type = uint4;
};
// Element-sized words for data whose base pointer is only 4-byte aligned (possible for
// std::complex<float>/<double> sub-blocks): moved one element at a time.
template <int E>
struct alignas(4) LooseWord {
  unsigned int w[E / 4];
};

template <class W, int VW>
struct alignas(VW > 1 ? 16 : alignof(W)) Vec {
  W w[VW];
};

// dst[k] = src[k] for the k of [0, VW) where 0 <= first + k < n (first: the run's position in
// an output segment of n elements): one vector store when the whole run lies inside the
// segment, else element by element, so that no byte outside it is written.
template <class W, int VW>
__device__ __forceinline__ void store_run(W* dst, const W* src, i64 first, i64 n) {
  Vec<W, VW> w;
#pragma unroll
  for (int k = 0; k < VW; ++k)
    if (first + k >= 0 && first + k < n)
      w.w[k] = src[k];
  if (first >= 0 && first + VW <= n) {
    *reinterpret_cast<Vec<W, VW>*>(dst) = w;
  } else {
#pragma unroll
    for (int k = 0; k < VW; ++k)
      if (first + k >= 0 && first + k < n)
        dst[k] = w.w[k];
  }
}

// Segments of one phase: NSEG segments (tile rows when loading, tile columns when storing) of at
// most L elements, cut into VW-element vectors, dealt to NT threads.
template <int VW, int NSEG, int L, int NT, bool kAligned>
struct Walk {
  static_assert(NSEG % 4 == 0, "segments come in fours");
  static constexpr int kVecs = L / VW + ((kAligned || VW == 1) ? 0 : 1);
  static constexpr int kChunks = (kVecs + 7) / 8;
  static constexpr int kSlots = (NSEG / 4) * kChunks * 32;
  static constexpr int kIters = (kSlots + NT - 1) / NT;
  __device__ static void slot(int s, int& seg, int& vec) {
    const int lane = s & 31, ws = s >> 5;
    seg = (ws % (NSEG / 4)) * 4 + (lane >> 3);
    vec = (ws / (NSEG / 4)) * 8 + (lane & 7);
  }
  __device__ static bool live(int s) { return kSlots % NT == 0 || s < kSlots; }
};

// The arguments that the tile kernels (TransposeTile, WideTile) take for a matrix.
template <class W>
struct TileArgs {
  const W* __restrict__ in;
  W* __restrict__ out;
  i64 rows, cols, ld_in, ld_out;
  i64 span;      // elements from in[0] to one past the last element of the matrix
  int phase_in;  // element 0 of `in` within its 16-byte vector
  int phase_out; // element 0 of `out` within its 32-byte sector (TransposeTile) or 16-byte vector
  i64 tiles_x;   // tiles along a row of the input
};

template <class W, int VW, int TR, int TC, int NT, bool kAlignIn, bool kAlignOut>
struct TransposeTile : TileArgs<W> {
  static constexpr int kSector = 32 / static_cast<int>(sizeof(W)); // elements per sector
  static constexpr int H = kAlignOut ? 0 : kSector;                // halo rows above the tile
  static constexpr int RL = (TR + H + 3) / 4 * 4;                  // input rows loaded per tile
  static constexpr int S = RL + 1;                                 // shared row stride (odd)
  static_assert(TR % kSector == 0, "tile rows must be whole sectors");
  using V = Vec<W, VW>;
  using In = Walk<VW, RL, TC, NT, kAlignIn>;
  using Out = Walk<VW, TC, TR, NT, true>;

  using A = TileArgs<W>;
  using A::in, A::out, A::rows, A::cols, A::ld_in, A::ld_out, A::span, A::phase_in, A::phase_out,
      A::tiles_x;

  struct Pos {
    i64 i0, j0;
    int nc;
  };
  __device__ Pos pos(i64 t) const {
    const i64 ty = t / tiles_x, tx = t - ty * tiles_x;
    return {ty * TR, tx * TC, static_cast<int>(min(static_cast<i64>(TC), cols - tx * TC))};
  }
  // m_j: the shift of output row j's segment (0 when output rows start on sectors).
  __device__ int shift_out(i64 j, i64 i0) const {
    if constexpr (kAlignOut)
      return 0;
    else
      return static_cast<int>((phase_out + j * ld_out + i0) & (kSector - 1));
  }
  // Bit k: column j + k of local input row r belongs to this tile (halo rows only).
  __device__ unsigned owned_mask(int r, i64 j, i64 i0) const {
    const int step = static_cast<int>(ld_out & (kSector - 1));
    int m = shift_out(j, i0);
    unsigned mask = 0;
#pragma unroll
    for (int k = 0; k < VW; ++k) {
      mask |= static_cast<unsigned>(r >= H - m && r < H + TR - m) << k;
      m = (m + step) & (kSector - 1);
    }
    return mask;
  }

  __device__ void load(const Pos& p, V (&buf)[In::kIters], int (&cpos)[In::kIters]) const {
#pragma unroll
    for (int it = 0; it < In::kIters; ++it) {
      const int s = threadIdx.x + it * NT;
      cpos[it] = INT_MIN;
      int r, v;
      In::slot(s, r, v);
      const i64 i = p.i0 - H + r;
      if (!In::live(s) || r >= RL || v >= In::kVecs || i < 0 || i >= rows)
        continue;
      const i64 f0 = i * ld_in + p.j0;
      int shift = 0;
      if constexpr (!kAlignIn && VW > 1)
        shift = static_cast<int>((f0 + phase_in) & (VW - 1));
      const int c0 = v * VW - shift;
      if (c0 >= p.nc)
        continue;
      cpos[it] = c0;
      const W* src = in + f0 + c0;
      // A vector inside the matrix's memory span is read whole even where it sticks out of the
      // tile (into the neighbour tile, the row padding, or rows that belong to the tile above):
      // one 16-byte request instead of element requests, which would multiply the L2 traffic.
      // The extra elements are never stored.
      if (VW > 1 && f0 + c0 >= 0 && f0 + c0 + VW <= span) {
        buf[it] = *reinterpret_cast<const V*>(src);
      } else {
        const bool halo = H > 0 && (r < H || r >= TR);
        const unsigned mine = halo ? owned_mask(r, p.j0 + c0, p.i0) : (1u << VW) - 1u;
#pragma unroll
        for (int k = 0; k < VW; ++k)
          if (c0 + k >= 0 && c0 + k < p.nc && (mine >> k & 1u))
            buf[it].w[k] = src[k];
      }
    }
  }

  __device__ void scatter(W* tile, const Pos& p, const V (&buf)[In::kIters],
                          const int (&cpos)[In::kIters]) const {
#pragma unroll
    for (int it = 0; it < In::kIters; ++it) {
      if (cpos[it] == INT_MIN)
        continue;
      int r, v;
      In::slot(threadIdx.x + it * NT, r, v);
      const bool halo = H > 0 && (r < H || r >= TR);
      const unsigned mine = halo ? owned_mask(r, p.j0 + cpos[it], p.i0) : (1u << VW) - 1u;
#pragma unroll
      for (int k = 0; k < VW; ++k) {
        const int c = cpos[it] + k;
        if (c >= 0 && c < p.nc && (mine >> k & 1u))
          tile[c * S + r] = buf[it].w[k];
      }
    }
  }

  __device__ void store(const W* tile, const Pos& p) const {
#pragma unroll
    for (int it = 0; it < Out::kIters; ++it) {
      const int s = threadIdx.x + it * NT;
      int c, u;
      Out::slot(s, c, u);
      if (!Out::live(s) || c >= p.nc || u >= Out::kVecs)
        continue;
      const i64 j = p.j0 + c;
      const int m = shift_out(j, p.i0);
      const i64 ib = p.i0 - m + u * VW; // global row of the vector's first element
      const int rb = H - m + u * VW;    // its local row
      if (ib >= rows || ib + VW <= 0)
        continue;
      store_run<W, VW>(out + j * ld_out + ib, tile + c * S + rb, ib, rows);
    }
  }
};

// kMinBlocks: blocks per multiprocessor the register allocation must allow (0: no bound).
template <class W, int VW, int TR, int TC, int NT, int kMinBlocks, bool kAlignIn, bool kAlignOut>
__global__ void __launch_bounds__(NT, kMinBlocks > 0 ? kMinBlocks : 1)
    transpose_tiles(TransposeTile<W, VW, TR, TC, NT, kAlignIn, kAlignOut> k, i64 ntiles) {
  using K = TransposeTile<W, VW, TR, TC, NT, kAlignIn, kAlignOut>;
  __shared__ W tile[TC * K::S];
  typename K::V buf[K::In::kIters];
  int cpos[K::In::kIters];
  i64 t = blockIdx.x;
  if (t >= ntiles)
    return;
  typename K::Pos p = k.pos(t);
  k.load(p, buf, cpos);
  for (;;) {
    k.scatter(tile, p, buf, cpos);
    __syncthreads();
    // The next tile's loads fly while this tile is written out.
    const i64 next = t + gridDim.x;
    const typename K::Pos q = next < ntiles ? k.pos(next) : p;
    if (next < ntiles)
      k.load(q, buf, cpos);
    k.store(tile, p);
    if (next >= ntiles)
      break;
    __syncthreads();
    t = next;
    p = q;
  }
}

} // namespace tessera::cuda::detail
