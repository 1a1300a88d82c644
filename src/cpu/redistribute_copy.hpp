// The element loops of a redistribution, on the CPU: pack rectangles of a local block into a
// buffer, unpack them into another block applying B = beta·B + alpha·conj?(x), or do both at
// once for the rectangles a rank keeps. A rectangle is packed in its source's storage order, so
// packing reads memory in order and the transpose (if any) happens on the unpacking side.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tessera::cpu {

// Strides of a local block: element (r, c) of a rectangle starting at `offset` is at
// offset + r·row_stride + c·col_stride.
struct BlockStrides {
  std::int64_t row_stride = 1, col_stride = 1;
  bool row_major = true; // the order packing follows (explicit: a one-column block is both)
};

template <class T>
struct is_complex_element : std::false_type {};
template <class T>
struct is_complex_element<std::complex<T>> : std::true_type {};

// How a received element lands in B.
template <class T>
struct ScaleUpdate {
  T alpha{1};
  T beta{0};
  bool conjugate = false;

  T source(T x) const noexcept {
    if constexpr (is_complex_element<T>::value)
      return conjugate ? std::conj(x) : x;
    else
      return x;
  }
  // beta = 0 never reads B; alpha = 1 with beta = 0 copies bits (NaN payloads, -0).
  void apply(T& b, T x) const noexcept {
    if (beta == T{0})
      b = alpha == T{1} ? source(x) : alpha * source(x);
    else
      b = beta * b + alpha * source(x);
  }
};

// Visits (r, c) of a rows × cols rectangle in the order of the source's storage: rows outer when
// the source is row-major, columns outer when it is column-major; k counts the visits.
template <class F>
inline void for_each_in_order(std::int64_t rows, std::int64_t cols, bool row_major, F&& f) {
  std::int64_t k = 0;
  if (row_major) {
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        f(r, c, k++);
  } else {
    for (std::int64_t c = 0; c < cols; ++c)
      for (std::int64_t r = 0; r < rows; ++r)
        f(r, c, k++);
  }
}

// Visits every (r, c) of a rows × cols rectangle in tiles of kTile × kTile, along columns inside
// a tile when `columns_inside`: when one side is contiguous along rows and the other along
// columns (a transpose), a tile reads and writes whole cache lines (kTile elements of 64 bytes)
// on both sides, and the caller runs the inner loop along the destination's contiguous side.
// Larger tiles thrash the L1 cache where the strided side's stride is a multiple of 4 KiB (all
// its lines in one set); the measured gain is in bench/RESULTS.md (Layouts).
template <std::int64_t kTile, class F>
inline void for_each_in_tiles(std::int64_t rows, std::int64_t cols, bool columns_inside, F&& f) {
  for (std::int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (std::int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const std::int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      if (columns_inside) {
        for (std::int64_t c = c0; c < c1; ++c)
          for (std::int64_t r = r0; r < r1; ++r)
            f(r, c);
      } else {
        for (std::int64_t r = r0; r < r1; ++r)
          for (std::int64_t c = c0; c < c1; ++c)
            f(r, c);
      }
    }
}

// Applies `u` to every (r, c): in storage order when the destination runs the same way as the
// order `row_major` names (both sides contiguous), else by tiles. The update's branches are
// taken once, outside the loops.
template <class T, class Src>
inline void update_rectangle(std::int64_t rows, std::int64_t cols, bool row_major, T* dst,
                             BlockStrides d, const ScaleUpdate<T>& u, Src&& src) {
  const bool same_way = row_major ? d.col_stride == 1 : d.row_stride == 1;
  auto run = [&](auto&& apply) {
    auto at = [&](std::int64_t r, std::int64_t c) {
      apply(dst[r * d.row_stride + c * d.col_stride], src(r, c));
    };
    if (same_way)
      for_each_in_order(rows, cols, row_major,
                        [&](std::int64_t r, std::int64_t c, std::int64_t) { at(r, c); });
    else
      for_each_in_tiles<std::max<std::int64_t>(4, 64 / sizeof(T))>(rows, cols, d.row_stride == 1,
                                                                   at);
  };
  const bool plain = u.beta == T{0} && u.alpha == T{1} && !u.conjugate;
  if (plain)
    run([](T& b, T x) { b = x; });
  else
    run([&u](T& b, T x) { u.apply(b, x); });
}

// A plain copy (alpha = 1, beta = 0, no conjugate) whose source lines (rows when row_major, else
// columns; src_line apart, contiguous) run the same way as the destination's: one memcpy a line,
// where the general (r, c) index loop was slow on short lines (docs/performance.md,
// "Redistribution between layouts (CPU)"). Returns whether it applied.
template <class T>
inline bool copy_lines(const T* src, std::int64_t src_line, bool row_major, std::int64_t rows,
                       std::int64_t cols, T* dst, BlockStrides d, const ScaleUpdate<T>& u) {
  const bool plain = u.beta == T{0} && u.alpha == T{1} && !u.conjugate;
  if (!plain || !(row_major ? d.col_stride == 1 : d.row_stride == 1))
    return false;
  const std::int64_t lines = row_major ? rows : cols, length = row_major ? cols : rows;
  const std::int64_t dst_line = row_major ? d.row_stride : d.col_stride;
  for (std::int64_t l = 0; l < lines; ++l)
    std::memcpy(dst + l * dst_line, src + l * src_line,
                static_cast<std::size_t>(length) * sizeof(T));
  return true;
}

// Whether a block's lines in its storage order are contiguous (the strides it was built with).
inline bool lines_contiguous(BlockStrides s) {
  return s.row_major ? s.col_stride == 1 : s.row_stride == 1;
}

template <class T>
inline void pack_rectangle(const T* src, BlockStrides s, std::int64_t rows, std::int64_t cols,
                           T* packed) {
  const BlockStrides tight =
      s.row_major ? BlockStrides{cols, 1, true} : BlockStrides{1, rows, false};
  if (lines_contiguous(s) && copy_lines(src, s.row_major ? s.row_stride : s.col_stride, s.row_major,
                                        rows, cols, packed, tight, ScaleUpdate<T>{}))
    return;
  for_each_in_order(rows, cols, s.row_major, [&](std::int64_t r, std::int64_t c, std::int64_t k) {
    packed[k] = src[r * s.row_stride + c * s.col_stride];
  });
}

// `packed` was packed from a source whose storage was row-major when packed_row_major.
template <class T>
inline void unpack_rectangle(const T* packed, bool packed_row_major, std::int64_t rows,
                             std::int64_t cols, T* dst, BlockStrides d, const ScaleUpdate<T>& u) {
  if (copy_lines(packed, packed_row_major ? cols : rows, packed_row_major, rows, cols, dst, d, u))
    return;
  update_rectangle(rows, cols, packed_row_major, dst, d, u, [&](std::int64_t r, std::int64_t c) {
    return packed[packed_row_major ? r * cols + c : c * rows + r];
  });
}

template <class T>
inline void copy_rectangle(const T* src, BlockStrides s, std::int64_t rows, std::int64_t cols,
                           T* dst, BlockStrides d, const ScaleUpdate<T>& u) {
  if (lines_contiguous(s) && copy_lines(src, s.row_major ? s.row_stride : s.col_stride, s.row_major,
                                        rows, cols, dst, d, u))
    return;
  update_rectangle(rows, cols, s.row_major, dst, d, u, [&](std::int64_t r, std::int64_t c) {
    return src[r * s.row_stride + c * s.col_stride];
  });
}

} // namespace tessera::cpu
