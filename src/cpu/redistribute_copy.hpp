// The element loops of a redistribution, on the CPU: pack rectangles of a local block into a
// buffer, unpack them into another block applying B = beta·B + alpha·conj?(x), or do both at
// once for the rectangles a rank keeps. A rectangle is packed in its source's storage order, so
// packing reads memory in order and the transpose (if any) happens on the unpacking side.
#pragma once

#include <complex>
#include <cstdint>
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

template <class T>
inline void pack_rectangle(const T* src, BlockStrides s, std::int64_t rows, std::int64_t cols,
                           T* packed) {
  for_each_in_order(rows, cols, s.row_major, [&](std::int64_t r, std::int64_t c, std::int64_t k) {
    packed[k] = src[r * s.row_stride + c * s.col_stride];
  });
}

// `packed` was packed from a source whose storage was row-major when packed_row_major.
template <class T>
inline void unpack_rectangle(const T* packed, bool packed_row_major, std::int64_t rows,
                             std::int64_t cols, T* dst, BlockStrides d, const ScaleUpdate<T>& u) {
  for_each_in_order(rows, cols, packed_row_major,
                    [&](std::int64_t r, std::int64_t c, std::int64_t k) {
                      u.apply(dst[r * d.row_stride + c * d.col_stride], packed[k]);
                    });
}

template <class T>
inline void copy_rectangle(const T* src, BlockStrides s, std::int64_t rows, std::int64_t cols,
                           T* dst, BlockStrides d, const ScaleUpdate<T>& u) {
  for_each_in_order(rows, cols, s.row_major, [&](std::int64_t r, std::int64_t c, std::int64_t) {
    u.apply(dst[r * d.row_stride + c * d.col_stride], src[r * s.row_stride + c * s.col_stride]);
  });
}

} // namespace tessera::cpu
