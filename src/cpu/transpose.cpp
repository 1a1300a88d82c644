// OpenMP out-of-place transpose: square tiles so that both the rows read and the rows written
// stay in cache while a tile is moved; threads own contiguous bands of output rows.
#include "cpu/transpose.hpp"

#include <omp.h>

#include <algorithm>
#include <complex>
#include <cstring>

#include "core/throw.hpp"

namespace tessera::cpu {

namespace {

// Runs body(k) for k in [0, n) over the OpenMP threads, statically scheduled: inside a parallel
// region as a worksharing loop of the team, otherwise in a region of its own.
template <class Body>
void omp_static_for(std::int64_t n, const Body& body) {
  if (omp_in_parallel()) {
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < n; ++k)
      body(k);
  } else {
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < n; ++k)
      body(k);
  }
}

// Tile edge in elements: a tile of input and one of output fit comfortably in L1.
template <class T>
constexpr std::int64_t tile_edge() {
  return sizeof(T) <= 4 ? 64 : (sizeof(T) <= 8 ? 32 : 16);
}

} // namespace

template <class T>
void transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
               std::int64_t ld_out) {
  TESSERA_REQUIRE(rows >= 0 && cols >= 0, InputError, "transpose: negative shape {}x{}", rows,
                  cols);
  TESSERA_REQUIRE(ld_in >= cols && ld_out >= rows, InputError,
                  "transpose: leading dimensions ({}, {}) too small for {}x{}", ld_in, ld_out, rows,
                  cols);
  if (rows == 0 || cols == 0)
    return;
  constexpr std::int64_t B = tile_edge<T>();
  const std::int64_t row_tiles = (rows + B - 1) / B;
  const std::int64_t col_tiles = (cols + B - 1) / B;
  // Consecutive k walk along one band of output rows (one input column tile), so each thread
  // writes a contiguous stretch of the output.
  omp_static_for(row_tiles * col_tiles, [&](std::int64_t k) {
    const std::int64_t j0 = (k / row_tiles) * B;
    const std::int64_t i0 = (k % row_tiles) * B;
    const std::int64_t j1 = std::min(j0 + B, cols);
    const std::int64_t i1 = std::min(i0 + B, rows);
    for (std::int64_t j = j0; j < j1; ++j)
      for (std::int64_t i = i0; i < i1; ++i)
        out[j * ld_out + i] = in[i * ld_in + j];
  });
}

void transpose(DType t, const void* in, void* out, std::int64_t rows, std::int64_t cols,
               std::int64_t ld_in, std::int64_t ld_out) {
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    transpose(static_cast<const T*>(in), static_cast<T*>(out), rows, cols, ld_in, ld_out);
  });
}

void parallel_copy(const void* src, void* dst, std::size_t n) {
  // Chunks of whole cache lines, one contiguous range per thread.
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  const auto chunks = static_cast<std::int64_t>((n + kChunk - 1) / kChunk);
  omp_static_for(chunks, [&](std::int64_t k) {
    const std::size_t begin = static_cast<std::size_t>(k) * kChunk;
    std::memcpy(d + begin, s + begin, std::min(kChunk, n - begin));
  });
}

template void transpose(const float*, float*, std::int64_t, std::int64_t, std::int64_t,
                        std::int64_t);
template void transpose(const double*, double*, std::int64_t, std::int64_t, std::int64_t,
                        std::int64_t);
template void transpose(const std::complex<float>*, std::complex<float>*, std::int64_t,
                        std::int64_t, std::int64_t, std::int64_t);
template void transpose(const std::complex<double>*, std::complex<double>*, std::int64_t,
                        std::int64_t, std::int64_t, std::int64_t);

} // namespace tessera::cpu
