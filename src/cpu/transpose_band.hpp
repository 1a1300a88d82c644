// The tile walk shared by the register-block kernels (AVX2, AVX-512). Include it only from an
// instruction-set file, after its target pragma, so that the walk is compiled for that set and
// inlines the block moves; each file instantiates it with its own Block types.
//
// Block: `static constexpr int N`, `using Word` (an unsigned type of the element's size, or a
// 16-byte struct), and `static void move(const Word* in, std::int64_t ld_in, Word* out,
// std::int64_t ld_out)` moving one N x N block through registers.
//
// Tiles of tile_rows input rows x tile_bands blocks of N columns; consecutive tiles of a thread
// walk down one band of output rows, so each thread writes long sequential output streams.
#pragma once

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "cpu/transpose_kernel.hpp"

namespace tessera::cpu::detail {

// Where the row segments of the tile walk start: every tile_rows rows from `shift` (with a
// thin first segment [0, shift) when shift > 0). When all output rows start at the same offset
// in a 64-byte line (ld_out a multiple of a line), the grid is shifted so that every block's
// output runs begin on a line: otherwise each 64-byte store straddles two lines, and
// non-temporal stores cannot be used at all. A std::vector's data, 16 bytes past a line, ran at
// a quarter of the aligned speed (4096² f64, one thread, on an Intel Xeon).
template <class Word>
std::int64_t line_shift(const Word* out, std::int64_t ld_out) {
  constexpr auto line = static_cast<std::int64_t>(64 / sizeof(Word));
  const auto addr = reinterpret_cast<std::uintptr_t>(out);
  if (line <= 1 || ld_out % line != 0 || addr % sizeof(Word) != 0)
    return 0;
  const auto mis = static_cast<std::int64_t>(addr / sizeof(Word) % line);
  return (line - mis) % line;
}

// Whether a tile of the walk follows, and is followed by, a tile of the same thread further down
// the same bands (the next input rows of the same output rows).
struct TileLink {
  bool after_previous = false;
  bool before_next = false;
};

// The tile walk alone: band(j, i0, i1, tile_rows, link) moves input rows [i0, i1) of the N
// columns from j (one band of output rows); the last cols % N columns are moved element by
// element, by the tile of the last column group while its input rows are still in the cache (a
// separate pass would read a tall-and-skinny matrix from memory twice). Each thread takes one
// contiguous run of tiles (as schedule(static)), so it walks down its band groups tile after
// tile; `link` tells the band which of its tiles continue one another. No barrier:
// the caller ends the walk (after a store fence, where it streams).
template <std::int64_t N, class Word, class Band>
void walk_bands(const Word* in, Word* out, std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                std::int64_t ld_out, const KernelParams& k, Band&& band) {
  const std::int64_t tile_rows = std::max<std::int64_t>(N, k.tile_rows / N * N);
  const std::int64_t group = std::max(1, k.tile_bands);
  const std::int64_t bands = cols / N;
  const std::int64_t groups = std::max<std::int64_t>(1, (bands + group - 1) / group);
  const std::int64_t shift = std::min(rows, line_shift(out, ld_out));
  const std::int64_t head = shift > 0 ? 1 : 0; // the thin first segment
  const std::int64_t segments = head + (rows - shift + tile_rows - 1) / tile_rows;
  const std::int64_t jr = bands * N; // the first leftover column
  const std::int64_t tiles = groups * segments;
  const std::int64_t team = omp_get_num_threads(), me = omp_get_thread_num();
  const std::int64_t per = tiles / team, extra = tiles % team;
  const std::int64_t t0 = me * per + std::min(me, extra), t1 = t0 + per + (me < extra ? 1 : 0);
  for (std::int64_t t = t0; t < t1; ++t) {
    const std::int64_t g = t / segments, sgm = t % segments;
    const std::int64_t i0 = sgm < head ? 0 : shift + (sgm - head) * tile_rows;
    const std::int64_t i1 = sgm < head ? shift : std::min(i0 + tile_rows, rows);
    const TileLink link{t > t0 && sgm > 0, t + 1 < t1 && sgm + 1 < segments};
    for (std::int64_t b = g * group; b < std::min(bands, (g + 1) * group); ++b)
      band(b * N, i0, i1, tile_rows, link);
    if (g == groups - 1)
      for (std::int64_t j = jr; j < cols; ++j)
        for (std::int64_t i = i0; i < i1; ++i)
          out[j * ld_out + i] = in[i * ld_in + j];
  }
}

// `fence`: the block moves use non-temporal stores, made visible before the closing barrier.
template <class Block>
void transpose_banded(const typename Block::Word* in, typename Block::Word* out, std::int64_t rows,
                      std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out,
                      const KernelParams& k, bool fence = false) {
  constexpr std::int64_t N = Block::N;
  walk_bands<N>(
      in, out, rows, cols, ld_in, ld_out, k,
      [&](std::int64_t j, std::int64_t i0, std::int64_t i1, std::int64_t tile_rows, TileLink) {
        std::int64_t i = i0;
        for (; i + N <= i1; i += N) {
          // The same columns one tile further down: the hardware prefetchers follow
          // few of a tile's many short row streams, and rows whose stride is not a
          // multiple of 64 bytes straddle two lines per load.
          if (k.prefetch && i + tile_rows + N <= rows)
            for (std::int64_t r = 0; r < N; ++r)
              __builtin_prefetch(in + (i + tile_rows + r) * ld_in + j, 0, 3);
          Block::move(in + i * ld_in + j, ld_in, out + j * ld_out + i, ld_out);
        }
        for (; i < i1; ++i)
          for (std::int64_t c = 0; c < N; ++c)
            out[(j + c) * ld_out + i] = in[i * ld_in + j + c];
      });
  if (fence)
    _mm_sfence();
#pragma omp barrier
}

// transpose_banded over untyped pointers, for the element-size switch of each instruction set.
template <class Block>
void run_banded(const void* in, void* out, std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                std::int64_t ld_out, const KernelParams& k, bool fence = false) {
  using Word = typename Block::Word;
  transpose_banded<Block>(static_cast<const Word*>(in), static_cast<Word*>(out), rows, cols, ld_in,
                          ld_out, k, fence);
}

} // namespace tessera::cpu::detail
