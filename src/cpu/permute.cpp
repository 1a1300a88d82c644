// The permutation of dimensions (permute.hpp): row copies when the innermost dimension stays,
// else a batch of 2-D transposes. Large transposes go to the tuned 2-D kernel (transpose.hpp),
// every thread working on one at a time; small ones are many, so threads take whole tiles of
// the batch each, in a plain tiled loop.
#include "cpu/permute.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/dtype.hpp"
#include "core/throw.hpp"
#include "cpu/permute_layout.hpp"
#include "cpu/transpose.hpp"

namespace tessera::cpu {

namespace {

// Slices at least this large (elements) go to the tuned 2-D kernel.
constexpr std::int64_t tuned_slice_elements = std::int64_t{1} << 15;

// The dimensions a loop walks besides the ones a kernel moves: lengths and the element strides
// of input and output, outermost first.
struct OuterDims {
  std::vector<std::int64_t> length, in_stride, out_stride;
  std::int64_t count() const {
    std::int64_t n = 1;
    for (const std::int64_t l : length)
      n *= l;
    return n;
  }
  // The input and output offsets of outer index q (row-major over `length`).
  void offsets(std::int64_t q, std::int64_t& in_off, std::int64_t& out_off) const {
    in_off = 0;
    out_off = 0;
    for (std::size_t d = length.size(); d-- > 0;) {
      const std::int64_t i = q % length[d];
      q /= length[d];
      in_off += i * in_stride[d];
      out_off += i * out_stride[d];
    }
  }
};

std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;)
    s[d - 1] = s[d] * shape[d];
  return s;
}

// Output dimensions other than those in `skip`, as an outer loop.
OuterDims outer_dims(const PermuteLayout& p, const std::vector<std::int64_t>& in_stride,
                     const std::vector<std::int64_t>& out_stride, std::size_t skip_a,
                     std::size_t skip_b) {
  OuterDims o;
  for (std::size_t k = 0; k < p.axes.size(); ++k) {
    if (k == skip_a || k == skip_b)
      continue;
    const auto a = static_cast<std::size_t>(p.axes[k]);
    o.length.push_back(p.shape[a]);
    o.in_stride.push_back(in_stride[a]);
    o.out_stride.push_back(out_stride[k]);
  }
  return o;
}

// Innermost dimension unchanged: each outer index copies one contiguous row.
void copy_rows(const unsigned char* in, unsigned char* out, std::size_t row_bytes,
               const OuterDims& outer, std::size_t esize) {
  const std::int64_t rows = outer.count();
#pragma omp parallel for schedule(static)
  for (std::int64_t q = 0; q < rows; ++q) {
    std::int64_t i = 0, o = 0;
    outer.offsets(q, i, o);
    std::memcpy(out + static_cast<std::size_t>(o) * esize, in + static_cast<std::size_t>(i) * esize,
                row_bytes);
  }
}

// out[c*ld_out + r] = in[r*ld_in + c] over one tile, N bytes an element.
template <std::size_t N>
void transpose_tile(const unsigned char* in, unsigned char* out, std::int64_t r0, std::int64_t r1,
                    std::int64_t c0, std::int64_t c1, std::int64_t ld_in, std::int64_t ld_out) {
  for (std::int64_t c = c0; c < c1; ++c)
    for (std::int64_t r = r0; r < r1; ++r)
      std::memcpy(out + static_cast<std::size_t>(c * ld_out + r) * N,
                  in + static_cast<std::size_t>(r * ld_in + c) * N, N);
}

struct Slice {
  std::int64_t rows, cols, ld_in, ld_out;
};

template <std::size_t N>
void transpose_small_slices(const unsigned char* in, unsigned char* out, const Slice& s,
                            const OuterDims& outer) {
  constexpr std::int64_t edge = N <= 4 ? 32 : 16;
  const std::int64_t row_tiles = (s.rows + edge - 1) / edge;
  const std::int64_t col_tiles = (s.cols + edge - 1) / edge;
  const std::int64_t tiles = row_tiles * col_tiles;
  const std::int64_t work = outer.count() * tiles;
#pragma omp parallel for schedule(static)
  for (std::int64_t w = 0; w < work; ++w) {
    std::int64_t i = 0, o = 0;
    outer.offsets(w / tiles, i, o);
    const std::int64_t t = w % tiles;
    const std::int64_t c0 = (t / row_tiles) * edge, r0 = (t % row_tiles) * edge;
    transpose_tile<N>(in + static_cast<std::size_t>(i) * N, out + static_cast<std::size_t>(o) * N,
                      r0, std::min(r0 + edge, s.rows), c0, std::min(c0 + edge, s.cols), s.ld_in,
                      s.ld_out);
  }
}

// The tuned kernel moves 4-, 8- and 16-byte elements as words of these types.
DType word_type(std::size_t esize) {
  return esize == 4 ? DType::f32 : esize == 8 ? DType::c64 : DType::c128;
}

void transpose_large_slices(const unsigned char* in, unsigned char* out, std::size_t esize,
                            const Slice& s, const OuterDims& outer) {
  const std::int64_t n = outer.count();
  const DType t = word_type(esize);
#pragma omp parallel
  for (std::int64_t q = 0; q < n; ++q) {
    std::int64_t i = 0, o = 0;
    outer.offsets(q, i, o);
    // A worksharing step of the whole team, ending with a barrier.
    transpose(t, in + static_cast<std::size_t>(i) * esize,
              out + static_cast<std::size_t>(o) * esize, s.rows, s.cols, s.ld_in, s.ld_out);
  }
}

void transpose_slices(const unsigned char* in, unsigned char* out, std::size_t esize,
                      const Slice& s, const OuterDims& outer) {
  if (esize >= 4 && s.rows * s.cols >= tuned_slice_elements) {
    transpose_large_slices(in, out, esize, s, outer);
    return;
  }
  switch (esize) {
  case 1:
    return transpose_small_slices<1>(in, out, s, outer);
  case 2:
    return transpose_small_slices<2>(in, out, s, outer);
  case 4:
    return transpose_small_slices<4>(in, out, s, outer);
  case 8:
    return transpose_small_slices<8>(in, out, s, outer);
  default:
    return transpose_small_slices<16>(in, out, s, outer);
  }
}

} // namespace

bool permute_element_size_ok(std::size_t element_size) noexcept {
  return element_size == 1 || element_size == 2 || element_size == 4 || element_size == 8 ||
         element_size == 16;
}

void permute(const void* in, void* out, std::size_t element_size,
             std::span<const std::int64_t> shape, std::span<const int> axes) {
  TESSERA_REQUIRE(permute_element_size_ok(element_size), InputError,
                  "a permutation moves elements of 1, 2, 4, 8 or 16 bytes, not {}", element_size);
  const PermuteLayout p = reduce_permutation(shape, axes);
  const auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(out);
  const auto bytes = static_cast<std::size_t>(p.elements) * element_size;
  if (p.elements == 0)
    return;
  if (p.shape.empty() || p.identity()) {
    parallel_copy(src, dst, bytes);
    return;
  }
  const std::vector<std::int64_t> in_stride = row_major_strides(p.shape);
  const std::vector<std::int64_t> out_stride = row_major_strides(permuted_shape(p.shape, p.axes));
  const std::size_t last = p.axes.size() - 1;
  if (static_cast<std::size_t>(p.axes[last]) == last) {
    const OuterDims outer = outer_dims(p, in_stride, out_stride, last, last);
    copy_rows(src, dst, static_cast<std::size_t>(p.shape[last]) * element_size, outer,
              element_size);
    return;
  }
  // Output's innermost dimension j = axes[last]; the input's innermost sits at output position q.
  const auto j = static_cast<std::size_t>(p.axes[last]);
  const auto q = static_cast<std::size_t>(
      std::find(p.axes.begin(), p.axes.end(), static_cast<int>(last)) - p.axes.begin());
  const Slice s{p.shape[j], p.shape[last], in_stride[j], out_stride[q]};
  transpose_slices(src, dst, element_size, s, outer_dims(p, in_stride, out_stride, q, last));
}

} // namespace tessera::cpu
