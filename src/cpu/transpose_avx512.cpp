// AVX-512 register-block kernels, compiled for AVX-512F whatever the build flags and chosen at
// run time only on processors that have it. Integer shuffles only: the bits move unchanged.
//  - 4-byte elements: 16 x 16 blocks, 8-byte elements: 8 x 8 blocks, 16-byte elements: 4 x 4
//    blocks of 128-bit lanes; N 64-byte row loads, a register transpose, N 64-byte stores, each a
//    whole line of one output row;
//  - optionally, for every element size, non-temporal stores of whole aligned lines (below).
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>

#include "cpu/transpose_kernel.hpp"

#if defined(__x86_64__)

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx512f")
// GCC 12 reports its own intrinsics' undefined-vector placeholders as maybe-uninitialized
// (as uninitialized at -O1 with the sanitizers).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include "cpu/transpose_band.hpp"

namespace tessera::cpu::detail {

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

// r[k] = row k of an 8x8 block in, column k of it out.
inline void transpose8x8(__m512i r[8]) {
  __m512i a[8], b[8];
  for (int k = 0; k < 8; k += 2) {
    a[k] = _mm512_unpacklo_epi64(r[k], r[k + 1]);
    a[k + 1] = _mm512_unpackhi_epi64(r[k], r[k + 1]);
  }
  const __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  for (int k = 0; k < 8; k += 4) {
    b[k] = _mm512_permutex2var_epi64(a[k], lo, a[k + 2]);
    b[k + 2] = _mm512_permutex2var_epi64(a[k], hi, a[k + 2]);
    b[k + 1] = _mm512_permutex2var_epi64(a[k + 1], lo, a[k + 3]);
    b[k + 3] = _mm512_permutex2var_epi64(a[k + 1], hi, a[k + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm512_shuffle_i64x2(b[k], b[k + 4], 0x44);
    r[k + 4] = _mm512_shuffle_i64x2(b[k], b[k + 4], 0xEE);
  }
}

// r[k] = row k of a 16x16 block of 4-byte words in, column k of it out: 4 x 4 transposes inside
// each 128-bit lane, then the lanes themselves as a 4 x 4 block.
inline void transpose16x16(__m512i r[16]) {
  __m512i t[16];
  for (int k = 0; k < 16; k += 2) {
    t[k] = _mm512_unpacklo_epi32(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_epi32(r[k], r[k + 1]);
  }
  // Lane L of r[4g + c]: rows 4g..4g+3 of column 4L + c.
  for (int k = 0; k < 16; k += 4) {
    r[k] = _mm512_unpacklo_epi64(t[k], t[k + 2]);
    r[k + 1] = _mm512_unpackhi_epi64(t[k], t[k + 2]);
    r[k + 2] = _mm512_unpacklo_epi64(t[k + 1], t[k + 3]);
    r[k + 3] = _mm512_unpackhi_epi64(t[k + 1], t[k + 3]);
  }
  // Column 4L + c: lane L of r[c], r[4 + c], r[8 + c] and r[12 + c], in that order.
  for (int c = 0; c < 4; ++c) {
    t[c] = _mm512_shuffle_i32x4(r[c], r[4 + c], 0x44);     // lanes 0, 1 of both
    t[4 + c] = _mm512_shuffle_i32x4(r[c], r[4 + c], 0xEE); // lanes 2, 3 of both
    t[8 + c] = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0x44);
    t[12 + c] = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    r[c] = _mm512_shuffle_i32x4(t[c], t[8 + c], 0x88);
    r[4 + c] = _mm512_shuffle_i32x4(t[c], t[8 + c], 0xDD);
    r[8 + c] = _mm512_shuffle_i32x4(t[4 + c], t[12 + c], 0x88);
    r[12 + c] = _mm512_shuffle_i32x4(t[4 + c], t[12 + c], 0xDD);
  }
}

// The register blocks whose output rows are one 64-byte line each (N words of 64 / N bytes),
// with what the streaming walk below needs of them:
//  - load: the block's N input rows, transposed (r[k]: output row k);
//  - join_index(s), join(a, idx, b): the line that starts at element s of row a and ends in b
//    (a[s..N-1], b[0..s-1]);
//  - store_masked: the elements of a row a mask selects; head_mask(s): the mask of a row's first
//    s elements, shift_of(head_mask(s)) == s. Masks select the store's lanes, one bit an element
//    for 4- and 8-byte elements but two (one a qword) for 16-byte ones.
// What the line blocks share (Block: N, Word, Mask, load): move() for the banded walk, one
// 64-byte store per output row; and, one mask bit an element, head_mask and shift_of.
template <class Block>
struct LineBlock {
  template <class Word> // Block::Word (a template: Block is incomplete here)
  static inline void move(const Word* in, std::int64_t ld_in, Word* out, std::int64_t ld_out) {
    __m512i r[Block::N];
    Block::load(in, ld_in, r);
    for (int k = 0; k < Block::N; ++k)
      _mm512_storeu_si512(out + k * ld_out, r[k]);
  }
  static inline auto head_mask(unsigned s) {
    return static_cast<typename Block::Mask>((1u << s) - 1u);
  }
  static inline int shift_of(unsigned head) { return __builtin_popcount(head); }
};

struct Block8x8 : LineBlock<Block8x8> {
  static constexpr int N = 8;
  using Word = u64;
  using Mask = __mmask8;
  static inline void load(const Word* in, std::int64_t ld_in, __m512i r[8]) {
    for (int k = 0; k < 8; ++k)
      r[k] = _mm512_loadu_si512(in + k * ld_in);
    transpose8x8(r);
  }
  static inline __m512i join_index(unsigned s) {
    return _mm512_add_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(s));
  }
  static inline __m512i join(__m512i a, __m512i idx, __m512i b) {
    return _mm512_permutex2var_epi64(a, idx, b);
  }
  static inline void store_masked(Word* p, Mask m, __m512i v) { _mm512_mask_storeu_epi64(p, m, v); }
};

struct Block4x16 : LineBlock<Block4x16> {
  static constexpr int N = 16;
  using Word = u32;
  using Mask = __mmask16;
  static inline void load(const Word* in, std::int64_t ld_in, __m512i r[16]) {
    for (int k = 0; k < 16; ++k)
      r[k] = _mm512_loadu_si512(in + k * ld_in);
    transpose16x16(r);
  }
  static inline __m512i join_index(unsigned s) {
    return _mm512_add_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                            _mm512_set1_epi32(static_cast<int>(s)));
  }
  static inline __m512i join(__m512i a, __m512i idx, __m512i b) {
    return _mm512_permutex2var_epi32(a, idx, b);
  }
  static inline void store_masked(Word* p, Mask m, __m512i v) { _mm512_mask_storeu_epi32(p, m, v); }
};

// An element is two qwords (one 128-bit lane): shifts and masks count qwords, two an element.
struct Block16x4 : LineBlock<Block16x4> {
  static constexpr int N = 4;
  using Word = Word16;
  using Mask = __mmask8;
  static inline void load(const Word* in, std::int64_t ld_in, __m512i r[4]) {
    for (int k = 0; k < 4; ++k)
      r[k] = _mm512_loadu_si512(in + k * ld_in);
    const __m512i t0 = _mm512_shuffle_i64x2(r[0], r[1], 0x44); // r0.l0 r0.l1 r1.l0 r1.l1
    const __m512i t1 = _mm512_shuffle_i64x2(r[0], r[1], 0xEE); // r0.l2 r0.l3 r1.l2 r1.l3
    const __m512i t2 = _mm512_shuffle_i64x2(r[2], r[3], 0x44);
    const __m512i t3 = _mm512_shuffle_i64x2(r[2], r[3], 0xEE);
    r[0] = _mm512_shuffle_i64x2(t0, t2, 0x88); // lane 0 of every row
    r[1] = _mm512_shuffle_i64x2(t0, t2, 0xDD);
    r[2] = _mm512_shuffle_i64x2(t1, t3, 0x88);
    r[3] = _mm512_shuffle_i64x2(t1, t3, 0xDD);
  }
  static inline __m512i join_index(unsigned s) {
    return _mm512_add_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
                            _mm512_set1_epi64(static_cast<long long>(2 * s)));
  }
  static inline __m512i join(__m512i a, __m512i idx, __m512i b) {
    return _mm512_permutex2var_epi64(a, idx, b);
  }
  static inline void store_masked(Word* p, Mask m, __m512i v) { _mm512_mask_storeu_epi64(p, m, v); }
  static inline Mask head_mask(unsigned s) { return static_cast<Mask>((1u << (2 * s)) - 1u); }
  static inline int shift_of(Mask head) { return __builtin_popcount(head) / 2; }
};

// The lines of one band's output rows a tile could not finish: its last block, kept for the
// same thread's next tile down the band, which completes the lines it straddles. `until`: the
// input row the kept block ends at (-1: none kept).
template <class Block>
struct CarriedBlock {
  __m512i rows[Block::N];
  std::int64_t until = -1;
};

// Output rows whose lines start inside a block (row k's first whole line at element s[k]):
// each streamed line joins the last elements of the previous block and the first of the current
// one. The partial lines at both ends of the tile use masked ordinary stores, unless `carry`
// holds the previous tile's last block (`from_carry`: the first line then joins it) or is to keep
// this tile's (`to_carry`: its last lines are finished by the next tile). Without that, every
// output line a tile boundary cuts went through the cache twice, and rows a power-of-two-like
// stride apart share a few cache sets: 8191 x 8192 f64 ran at 5-9 GB/s against 34-38 for 8184 x
// 8192 (2 threads, Intel Xeon).
template <class Block>
inline void band_shifted(const typename Block::Word* src, std::int64_t ld_in,
                         typename Block::Word* const* orow, const __m512i* idx,
                         const typename Block::Mask* head, std::int64_t blocks,
                         CarriedBlock<Block>* carry, bool from_carry, bool to_carry) {
  constexpr int N = Block::N;
  using Mask = typename Block::Mask;
  __m512i prev[N], cur[N];
  std::int64_t b = 0;
  if (from_carry) {
    for (int k = 0; k < N; ++k)
      prev[k] = carry->rows[k];
  } else {
    Block::load(src, ld_in, prev);
    for (int k = 0; k < N; ++k)
      Block::store_masked(orow[k], head[k], prev[k]);
    b = 1;
  }
  for (; b < blocks; ++b) {
    Block::load(src + N * b * ld_in, ld_in, cur);
    for (int k = 0; k < N; ++k) {
      // Line starting at block b-1's element s: prev[s..N-1], cur[0..s-1].
      const int s = Block::shift_of(head[k]);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(orow[k] + N * (b - 1) + s),
                          Block::join(prev[k], idx[k], cur[k]));
      prev[k] = cur[k];
    }
  }
  if (to_carry) {
    for (int k = 0; k < N; ++k)
      carry->rows[k] = prev[k];
    return;
  }
  for (int k = 0; k < N; ++k)
    Block::store_masked(orow[k] + N * (blocks - 1), static_cast<Mask>(~head[k]), prev[k]);
}

// Input rows [i0, i1) x columns [j, j+N) -> output rows j..j+N-1, with non-temporal stores of
// whole aligned lines, which skip the read-for-ownership of lines that are only overwritten.
// `carry`: this band's block kept between the thread's tiles (band_shifted), or null.
template <class Block>
inline void band_streaming(const typename Block::Word* in, std::int64_t ld_in,
                           typename Block::Word* out, std::int64_t ld_out, std::int64_t j,
                           std::int64_t i0, std::int64_t i1, CarriedBlock<Block>* carry,
                           TileLink link) {
  constexpr int N = Block::N;
  using Word = typename Block::Word;
  using Mask = typename Block::Mask;
  const std::int64_t blocks = (i1 - i0) / N;
  Word* orow[N];
  __m512i idx[N];
  Mask head[N];
  bool aligned = true;
  for (int k = 0; k < N; ++k) {
    orow[k] = out + (j + k) * ld_out + i0;
    const auto mis = (reinterpret_cast<std::uintptr_t>(orow[k]) % 64) / sizeof(Word);
    const auto s = static_cast<unsigned>((N - mis) % N);
    idx[k] = Block::join_index(s);
    head[k] = Block::head_mask(s);
    aligned = aligned && s == 0;
  }
  const Word* src = in + i0 * ld_in + j;
  std::int64_t done = 0; // input rows moved from i0
  if (aligned) {
    // Every block's output rows are whole lines: all of them streamed. (Through the general
    // path, the last block's ordinary stores pulled the last line of each tile's output rows
    // into the cache, and 16-row tiles of f64 then ran at half the speed of ordinary stores.)
    __m512i r[N];
    for (std::int64_t b = 0; b < blocks; ++b) {
      Block::load(src + N * b * ld_in, ld_in, r);
      for (int k = 0; k < N; ++k)
        _mm512_stream_si512(reinterpret_cast<__m512i*>(orow[k] + N * b), r[k]);
    }
    done = N * blocks;
  } else {
    // The previous tile's block is used only if it ends where this tile begins; this tile's is
    // kept only if the next tile continues it from its last row (whole blocks only).
    const bool from_carry = carry != nullptr && link.after_previous && carry->until == i0;
    const bool to_carry = carry != nullptr && link.before_next && (i1 - i0) % N == 0;
    if (blocks == 0 && from_carry) {
      // A last tile of fewer than N rows: the kept block's unfinished lines, as its own tile
      // would have ended them.
      for (int k = 0; k < N; ++k)
        Block::store_masked(orow[k] - N, static_cast<Mask>(~head[k]), carry->rows[k]);
      carry->until = -1;
    } else if (blocks >= 2 || (blocks == 1 && (from_carry || to_carry))) {
      band_shifted<Block>(src, ld_in, orow, idx, head, blocks, carry, from_carry, to_carry);
      if (from_carry && !to_carry)
        carry->until = -1;
      if (to_carry)
        carry->until = i1;
      done = N * blocks;
    }
  }
  for (std::int64_t i = i0 + done; i < i1; ++i)
    for (int k = 0; k < N; ++k)
      out[(j + k) * ld_out + i] = in[i * ld_in + j + k];
}

template <class Block>
void transpose_streaming(const typename Block::Word* in, typename Block::Word* out,
                         std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                         std::int64_t ld_out, const KernelParams& k) {
  constexpr std::int64_t N = Block::N;
  // One kept block per band of a tile: at most 32 KiB a thread for 16-byte elements, 64 KiB for
  // 8-byte ones and 128 KiB for 4-byte ones (128 bands), in the L2 cache, contiguous (no set
  // conflicts of its own).
  // Inside an OpenMP team nothing may throw: without the memory, the tiles end their lines as
  // before.
  const auto group = static_cast<std::size_t>(std::max(1, k.tile_bands));
  const std::unique_ptr<CarriedBlock<Block>[]> carried(
      ld_out % N != 0 ? new (std::nothrow) CarriedBlock<Block>[group] : nullptr);
  walk_bands<N>(in, out, rows, cols, ld_in, ld_out, k,
                [&](std::int64_t j, std::int64_t i0, std::int64_t i1, std::int64_t, TileLink link) {
                  CarriedBlock<Block>* carry =
                      carried ? &carried[static_cast<std::size_t>(j / N) % group] : nullptr;
                  band_streaming<Block>(in, ld_in, out, ld_out, j, i0, i1, carry, link);
                });
  _mm_sfence(); // make the non-temporal stores visible before the barrier
#pragma omp barrier
}

// One thread, one matrix: band by band (N input columns, N output rows), down the rows block by
// block, so that each output row's lines are written one after the other and each input line is
// read once. Rows and columns beyond the whole blocks are moved element by element.
template <class Block>
void transpose_blocks(const typename Block::Word* in, typename Block::Word* out, std::int64_t rows,
                      std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out, bool stream) {
  constexpr std::int64_t N = Block::N;
  const std::int64_t rows_b = rows / N * N, cols_b = cols / N * N;
  __m512i r[N];
  for (std::int64_t j = 0; j < cols_b; j += N) {
    for (std::int64_t i = 0; i < rows_b; i += N) {
      Block::load(in + i * ld_in + j, ld_in, r);
      for (int k = 0; k < N; ++k) {
        auto* o = out + (j + k) * ld_out + i;
        if (stream)
          _mm512_stream_si512(reinterpret_cast<__m512i*>(o), r[k]);
        else
          _mm512_storeu_si512(o, r[k]);
      }
    }
    for (std::int64_t k = 0; k < N; ++k)
      for (std::int64_t i = rows_b; i < rows; ++i)
        out[(j + k) * ld_out + i] = in[i * ld_in + j + k];
  }
  for (std::int64_t j = cols_b; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i)
      out[j * ld_out + i] = in[i * ld_in + j];
  if (stream)
    _mm_sfence(); // the non-temporal stores visible to whoever reads the output next
}

} // namespace

void transpose_blocks_avx512(std::size_t element_size, const void* in, void* out, std::int64_t rows,
                             std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out,
                             bool stream) {
  if (element_size == 4)
    transpose_blocks<Block4x16>(static_cast<const u32*>(in), static_cast<u32*>(out), rows, cols,
                                ld_in, ld_out, stream);
  else if (element_size == 8)
    transpose_blocks<Block8x8>(static_cast<const u64*>(in), static_cast<u64*>(out), rows, cols,
                               ld_in, ld_out, stream);
  else
    transpose_blocks<Block16x4>(static_cast<const Word16*>(in), static_cast<Word16*>(out), rows,
                                cols, ld_in, ld_out, stream);
}

void run_avx512(const KernelParams& k, std::size_t element_size, const void* in, void* out,
                std::int64_t rows, std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out) {
  // Streaming needs every output line to start at an element (output aligned to one), where
  // the joined lines are stored. complex<double> is aligned to 8 bytes only: a 16-byte output
  // off a 16-byte boundary takes the ordinary stores.
  if (element_size == 4) {
    const auto* i4 = static_cast<const u32*>(in);
    auto* o4 = static_cast<u32*>(out);
    if (k.streaming && reinterpret_cast<std::uintptr_t>(out) % 4 == 0)
      transpose_streaming<Block4x16>(i4, o4, rows, cols, ld_in, ld_out, k);
    else
      transpose_banded<Block4x16>(i4, o4, rows, cols, ld_in, ld_out, k);
  } else if (element_size == 8) {
    const auto* i8 = static_cast<const u64*>(in);
    auto* o8 = static_cast<u64*>(out);
    if (k.streaming && reinterpret_cast<std::uintptr_t>(out) % 8 == 0)
      transpose_streaming<Block8x8>(i8, o8, rows, cols, ld_in, ld_out, k);
    else
      transpose_banded<Block8x8>(i8, o8, rows, cols, ld_in, ld_out, k);
  } else {
    const auto* i16 = static_cast<const Word16*>(in);
    auto* o16 = static_cast<Word16*>(out);
    if (k.streaming && reinterpret_cast<std::uintptr_t>(out) % 16 == 0)
      transpose_streaming<Block16x4>(i16, o16, rows, cols, ld_in, ld_out, k);
    else
      transpose_banded<Block16x4>(i16, o16, rows, cols, ld_in, ld_out, k);
  }
}

} // namespace tessera::cpu::detail

#if defined(__clang__)
#pragma clang attribute pop
#elif defined(__GNUC__)
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

#endif // x86-64
