// Portable C++ kernel: square cache tiles, for every processor and element size. Also the
// fallback for the columns and rows the register-block kernels leave over.
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "cpu/transpose_kernel.hpp"

namespace tessera::cpu::detail {

namespace {

// An 8-byte element aligned to 4 bytes only (a complex<float> placed off an 8-byte boundary):
// moved as a pair of 4-byte words, since a uint64_t access there would be misaligned.
struct LooseWord8 {
  std::uint32_t lo, hi;
};

template <class W>
void transpose_tiled(const W* in, W* out, std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                     std::int64_t ld_out, std::int64_t edge) {
  const std::int64_t row_tiles = (rows + edge - 1) / edge;
  const std::int64_t col_tiles = (cols + edge - 1) / edge;
  // Consecutive k walk down one band of output rows, so each thread writes contiguous output.
#pragma omp for schedule(static)
  for (std::int64_t k = 0; k < row_tiles * col_tiles; ++k) {
    const std::int64_t j0 = (k / row_tiles) * edge;
    const std::int64_t i0 = (k % row_tiles) * edge;
    const std::int64_t j1 = std::min(j0 + edge, cols);
    const std::int64_t i1 = std::min(i0 + edge, rows);
    for (std::int64_t j = j0; j < j1; ++j)
      for (std::int64_t i = i0; i < i1; ++i)
        out[j * ld_out + i] = in[i * ld_in + j];
  }
}

} // namespace

void run_portable(const KernelParams& k, std::size_t element_size, const void* in, void* out,
                  std::int64_t rows, std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out) {
  const std::int64_t edge = std::max(4, k.tile_rows);
  switch (element_size) {
  case 4:
    transpose_tiled(static_cast<const std::uint32_t*>(in), static_cast<std::uint32_t*>(out), rows,
                    cols, ld_in, ld_out, edge);
    break;
  case 8:
    if (words_aligned(element_size, in, out))
      transpose_tiled(static_cast<const std::uint64_t*>(in), static_cast<std::uint64_t*>(out), rows,
                      cols, ld_in, ld_out, edge);
    else
      transpose_tiled(static_cast<const LooseWord8*>(in), static_cast<LooseWord8*>(out), rows, cols,
                      ld_in, ld_out, edge);
    break;
  default:
    transpose_tiled(static_cast<const Word16*>(in), static_cast<Word16*>(out), rows, cols, ld_in,
                    ld_out, edge);
    break;
  }
}

} // namespace tessera::cpu::detail
