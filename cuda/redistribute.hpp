// The element loops of a redistribution on the GPU (the CPU's are cpu/redistribute_copy.hpp):
// one launch moves a list of rectangles from one device block to another, each element landing
// as B = beta·B + alpha·conj?(x), or as a plain copy when packing. Whichever way each side is
// contiguous (along rows or along columns), a rectangle goes through shared-memory tiles, so
// that a transpose between the two sides reads and writes whole runs of memory on both.
//
// The arithmetic is the CPU's, operation for operation and each rounded on its own (no fused
// multiply-add): the GPU and CPU backends give the same bits for finite data.
#pragma once

#include <complex>
#include <cstdint>

#include "core/backend_fn.hpp"
#include "core/dtype.hpp"

struct CUstream_st;

namespace tessera::cuda {

// One rectangle of rows × cols elements: element (r, c) is read at src + src_offset +
// r·src_row_stride + c·src_col_stride and written likewise into dst. first_tile: the number of
// 32 × 32 tiles of the rectangles before it in its list (rectangle_tiles() counts them).
struct RectangleMove {
  std::int64_t rows = 0, cols = 0;
  std::int64_t src_offset = 0, src_row_stride = 1, src_col_stride = 1;
  std::int64_t dst_offset = 0, dst_row_stride = 1, dst_col_stride = 1;
  std::int64_t first_tile = 0;
};

// How elements land in the destination. Real types use alpha's and beta's real parts; beta = 0
// never reads the destination; alpha = 1 with beta = 0 and no conjugation copies bits.
struct ElementUpdate {
  std::complex<double> alpha = 1.0;
  std::complex<double> beta = 0.0;
  bool conjugate = false;
};

// The tile edge of move_rectangles, and the tiles a rows × cols rectangle takes.
inline constexpr std::int64_t kRectangleTile = 32;
inline std::int64_t rectangle_tiles(std::int64_t rows, std::int64_t cols) {
  return ((rows + kRectangleTile - 1) / kRectangleTile) *
         ((cols + kRectangleTile - 1) / kRectangleTile);
}

// Moves `count` rectangles described in device memory (d_moves, first_tile ascending, `tiles`
// in all) from src to dst, device pointers, queued on `stream`. f32, f64, c64 and c128. The
// rectangles must not overlap in dst, nor dst overlap src.
TESSERA_CUDA_FN(void move_rectangles(CUstream_st* stream, DType t, const RectangleMove* d_moves,
                                     std::int64_t count, std::int64_t tiles, const void* src,
                                     void* dst, const ElementUpdate& update));

} // namespace tessera::cuda
