// The permutation of dimensions (permute.hpp): row copies when the innermost dimension stays,
// else a batch of 2-D transposes. Large transposes go to the tuned 2-D kernel (transpose.hpp),
// each thread taking whole slices of its own when there are several per thread (the whole team
// on one slice at a time, when there are few); small ones are many, so threads take whole tiles
// of the batch each, in a plain tiled loop.
#include "cpu/permute.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/dtype.hpp"
#include "core/permute_layout.hpp"
#include "core/throw.hpp"
#include "cpu/transpose.hpp"
#include "cpu/transpose_kernel.hpp"
#include "cpu/transpose_tuner.hpp"

namespace tessera::cpu {

namespace {

// Slices at least this large (elements) go to the tuned 2-D kernel.
constexpr std::int64_t tuned_slice_elements = std::int64_t{1} << 15;

// Innermost dimension unchanged: each outer index copies one contiguous row.
void copy_rows(const unsigned char* in, unsigned char* out, std::size_t row_bytes,
               const PermuteOuter& outer, std::size_t esize) {
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

template <std::size_t N>
void transpose_small_slices(const unsigned char* in, unsigned char* out, const PermuteMoves& s,
                            const PermuteOuter& outer) {
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

// Batches of at least this many slices per thread are split by whole slices: the team working
// on one slice at a time pays a kernel choice and two barriers a slice (measured in
// docs/performance.md, "Permutations of dimensions (CPU)").
constexpr std::int64_t slices_per_thread = 4;

// Each thread moves a contiguous run of slices, each with the tuned kernel as a team of one (a
// nested region of one thread: the kernel's worksharing loop and barrier are then its own).
void transpose_own_slices(const unsigned char* in, unsigned char* out, std::size_t esize,
                          const PermuteMoves& s, const PermuteOuter& outer) {
  const std::int64_t n = outer.count();
#pragma omp parallel
  {
    const detail::KernelParams k =
        detail::choose_kernel(esize, in, out, s.rows, s.cols, s.ld_in, s.ld_out);
    const std::int64_t team = omp_get_num_threads(), me = omp_get_thread_num();
    const std::int64_t q0 = n * me / team, q1 = n * (me + 1) / team;
#pragma omp parallel num_threads(1)
    for (std::int64_t q = q0; q < q1; ++q) {
      std::int64_t i = 0, o = 0;
      outer.offsets(q, i, o);
      detail::run_kernel(k, esize, in + static_cast<std::size_t>(i) * esize,
                         out + static_cast<std::size_t>(o) * esize, s.rows, s.cols, s.ld_in,
                         s.ld_out);
    }
  }
}

void transpose_large_slices(const unsigned char* in, unsigned char* out, std::size_t esize,
                            const PermuteMoves& s, const PermuteOuter& outer) {
  const std::int64_t n = outer.count();
  if (n >= slices_per_thread * omp_get_max_threads()) {
    transpose_own_slices(in, out, esize, s, outer);
    return;
  }
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

// Arrays at least this large (bytes) are written with non-temporal stores: they would not stay
// in the cache, and the stores then skip reading each output line before overwriting it.
constexpr std::size_t streamed_bytes = std::size_t{32} << 20;

// Small slices of 4-, 8- and 16-byte elements with AVX-512: whole slices per thread, each moved
// by register blocks band by band (transpose_blocks_avx512). The plain tiles below re-read each
// input line once per column, which costs most where a tile's input rows lie far apart
// (docs/performance.md, "Permutations of dimensions (CPU)").
bool block_slices_fit(std::size_t esize, const PermuteMoves& s, const void* in, const void* out) {
  const std::int64_t n = esize == 4 ? 16 : esize == 8 ? 8 : 4;
  return esize >= 4 && s.rows >= n && s.cols >= n &&
         detail::configured_isa() == detail::Isa::Avx512 && detail::words_aligned(esize, in, out);
}

void transpose_block_slices(const unsigned char* in, unsigned char* out, std::size_t esize,
                            const PermuteMoves& s, const PermuteOuter& outer) {
  const std::int64_t n = outer.count();
  // Streaming needs every output row of every slice to start on a 64-byte line.
  bool stream = static_cast<std::size_t>(n * s.rows * s.cols) * esize >= streamed_bytes &&
                reinterpret_cast<std::uintptr_t>(out) % 64 == 0 &&
                (s.ld_out * static_cast<std::int64_t>(esize)) % 64 == 0;
  for (std::size_t d = 0; d < outer.length.size(); ++d)
    stream = stream && (outer.out_stride[d] * static_cast<std::int64_t>(esize)) % 64 == 0;
#pragma omp parallel for schedule(static)
  for (std::int64_t q = 0; q < n; ++q) {
    std::int64_t i = 0, o = 0;
    outer.offsets(q, i, o);
    detail::transpose_blocks_avx512(esize, in + static_cast<std::size_t>(i) * esize,
                                    out + static_cast<std::size_t>(o) * esize, s.rows, s.cols,
                                    s.ld_in, s.ld_out, stream);
  }
}

void transpose_slices(const unsigned char* in, unsigned char* out, std::size_t esize,
                      const PermuteMoves& s, const PermuteOuter& outer) {
  if (esize >= 4 && s.rows * s.cols >= tuned_slice_elements) {
    transpose_large_slices(in, out, esize, s, outer);
    return;
  }
  if (block_slices_fit(esize, s, in, out)) {
    transpose_block_slices(in, out, esize, s, outer);
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
  const PermuteMoves m = permute_moves(reduce_permutation(shape, axes));
  const auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(out);
  switch (m.kind) {
  case PermuteMoves::Kind::None:
    return;
  case PermuteMoves::Kind::Copy:
    parallel_copy(src, dst, static_cast<std::size_t>(m.elements) * element_size);
    return;
  case PermuteMoves::Kind::Rows:
    copy_rows(src, dst, static_cast<std::size_t>(m.row) * element_size, m.outer, element_size);
    return;
  case PermuteMoves::Kind::Transpose:
    transpose_slices(src, dst, element_size, m, m.outer);
    return;
  }
}

} // namespace tessera::cpu
