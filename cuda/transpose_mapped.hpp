// The transpose of pinned host memory into pinned host memory by the GPU's own loads and stores
// over the link (cuda/transpose_mapped.cuh): no copies and no device memory. Both pointers are
// device views of mapped host memory (device_view_of_host) aligned to the element's size (16
// bytes for c128: mapped_transpose_fits); any shape and leading dimensions. Queued on `stream`;
// the output is complete in host memory once the stream is.
#pragma once

#include <cstdint>

#include "core/backend_fn.hpp"
#include "core/dtype.hpp"

struct CUstream_st;

namespace tessera::cuda {

// A tile of the mapped kernel: this many input rows, of this many bytes each.
inline constexpr std::int64_t kMappedTileRows = 64;
inline constexpr std::int64_t kMappedRowRunBytes = 1024;

// Whether the mapped kernel beats the staged pipeline of copies (cuda/staged.hpp) for this
// matrix, from what was measured on an H200 (bench/RESULTS.md). The mapped kernel moves about
// 1 GiB each way in 26 ms whatever the size; the pipeline loses its first copy in and last copy
// out to filling and draining, which weighs less the more chunks a matrix has (16384² f32, 4
// chunks: 30 ms; f64, 9 chunks: 26 ms a GiB, level; c128, 16 chunks: 24 ms a GiB). So: 4- and
// 8-byte elements, input rows that all start on a 128-byte line (rows that start inside a line
// cost the mapped reads a third more: 16411 × 16363 f32 in 34 ms against 27) and at most 2 GiB;
// or a side shorter than a tile, whose staged copies move short pieces (a million rows of 17
// f32: 3.1 ms against 3.6; 17 rows of a million f64: 4.0 against 6.1).
inline bool mapped_transpose_preferred(DType t, const void* in, std::int64_t rows,
                                       std::int64_t cols, std::int64_t ld_in) {
  const auto e = static_cast<std::int64_t>(dtype_size(t));
  if (e > 8)
    return false;
  const bool skinny = rows < kMappedTileRows || cols * e < kMappedRowRunBytes;
  const bool on_lines = reinterpret_cast<std::uintptr_t>(in) % 128 == 0 && ld_in * e % 128 == 0;
  const bool small = rows * cols * e <= (std::int64_t{2} << 30);
  return skinny || (on_lines && small);
}

// Whether transpose_mapped takes these pointers (each aligned to the element's word).
TESSERA_CUDA_FN_OR(false, bool mapped_transpose_fits(DType t, const void* in, const void* out));

TESSERA_CUDA_FN(void transpose_mapped(CUstream_st* stream, DType t, const void* in, void* out,
                                      std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                                      std::int64_t ld_out));

} // namespace tessera::cuda
