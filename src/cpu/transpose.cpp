// OpenMP out-of-place transpose.
//
// Memory traffic decides the speed, so the kernels aim at touching every cache line of the
// input and of the output exactly once:
//  - 8-byte elements (f64, c64) on AVX-512 move 8x8 blocks through registers: eight 64-byte row
//    loads, a register transpose, eight 64-byte stores. A thread walks a band of eight output
//    rows down the input, so it writes eight long sequential streams.
//  - Tiles of 64 input rows x 256 columns, walked band by band: a band reads one line per row,
//    and the next band finds the neighbouring lines (shared when rows are not 64-byte aligned)
//    still in cache.
//  - With TESSERA_STREAMING_STORES=1 in the environment, outputs of 8 MiB and more are written
//    with non-temporal stores of whole, aligned cache lines, which skips the read-for-ownership
//    of lines that are only overwritten. Output rows that are not 64-byte aligned (odd leading
//    dimensions) are re-aligned in registers: each stored line joins the previous and the
//    current 8x8 block. It is off by default: on the machine measured in bench/RESULTS.md
//    streaming stores were slower than cached ones.
//  - Other element types, and builds without AVX-512, use square cache tiles.
// Threads own contiguous ranges of output rows (static schedule over bands of output rows).
#include "cpu/transpose.hpp"

#include <omp.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "core/throw.hpp"

namespace tessera::cpu {

namespace {

// Runs work() on every thread of the team: the caller's team inside an active parallel region
// (work() then consists of worksharing loops), otherwise a new one.
template <class Work>
void on_team(const Work& work) {
  if (omp_in_parallel()) {
    work();
  } else {
#pragma omp parallel
    work();
  }
}

// Outputs at least this large may be written around the caches (see above); smaller ones are
// likely to be read again soon, so they are left in cache.
[[maybe_unused]] constexpr std::size_t kStreamingBytes = std::size_t{8} << 20;

[[maybe_unused]] bool streaming_stores_enabled() {
  const char* v = std::getenv("TESSERA_STREAMING_STORES");
  return v != nullptr && v[0] == '1';
}

// ---- generic: square tiles -------------------------------------------------------------------

template <class T>
constexpr std::int64_t tile_edge() {
  return sizeof(T) <= 4 ? 64 : (sizeof(T) <= 8 ? 32 : 16);
}

template <class T>
void transpose_tiled(const T* in, T* out, std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                     std::int64_t ld_out) {
  constexpr std::int64_t B = tile_edge<T>();
  const std::int64_t row_tiles = (rows + B - 1) / B;
  const std::int64_t col_tiles = (cols + B - 1) / B;
  // Consecutive k walk down one band of output rows, so each thread writes contiguous output.
#pragma omp for schedule(static)
  for (std::int64_t k = 0; k < row_tiles * col_tiles; ++k) {
    const std::int64_t j0 = (k / row_tiles) * B;
    const std::int64_t i0 = (k % row_tiles) * B;
    const std::int64_t j1 = std::min(j0 + B, cols);
    const std::int64_t i1 = std::min(i0 + B, rows);
    for (std::int64_t j = j0; j < j1; ++j)
      for (std::int64_t i = i0; i < i1; ++i)
        out[j * ld_out + i] = in[i * ld_in + j];
  }
}

#if defined(__AVX512F__)
// GCC 12 reports its own intrinsics' undefined-vector placeholders as maybe-uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// ---- 8-byte elements, AVX-512 -------------------------------------------------------------------

using u64 = std::uint64_t;

// r[k] = row k of an 8x8 block in, column k of it out. Integer shuffles only: the bits move
// unchanged (complex<float> pairs and NaN payloads included).
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

inline void load8(const u64* in, std::int64_t ld_in, __m512i r[8]) {
  for (int k = 0; k < 8; ++k)
    r[k] = _mm512_loadu_si512(in + k * ld_in);
}

// A tile: kBandRows input rows x kBandGroup bands of 8 columns. Chosen by measurement
// (8192x8192 and 8191x12289 f64, 2 threads). With the prefetch below, 64-row tiles beat 32-row
// ones on both shapes; without it, taller tiles conflicted in the caches when row strides are
// near powers of two.
constexpr std::int64_t kBandRows = 64;
constexpr std::int64_t kBandGroup = 32;

// Input rows [i0, i1) x columns [j, j+8) -> output rows j..j+7, columns [i0, i1).
// Cached stores: plain unaligned 64-byte stores. Each 8x8 block prefetches the same columns
// kBandRows rows further down, i.e. the thread's next tile (input rows below `rows` only): the
// hardware prefetchers follow few of a tile's many short row streams, and rows whose stride is
// not a multiple of 64 bytes (8191x12289) straddle two lines per load.
inline void band8_cached(const u64* in, std::int64_t ld_in, u64* out, std::int64_t ld_out,
                         std::int64_t j, std::int64_t i0, std::int64_t i1, std::int64_t rows) {
  std::int64_t i = i0;
  __m512i r[8];
  for (; i + 8 <= i1; i += 8) {
    if (i + kBandRows + 8 <= rows)
      for (int k = 0; k < 8; ++k)
        _mm_prefetch(reinterpret_cast<const char*>(in + (i + kBandRows + k) * ld_in + j),
                     _MM_HINT_T0);
    load8(in + i * ld_in + j, ld_in, r);
    transpose8x8(r);
    for (int k = 0; k < 8; ++k)
      _mm512_storeu_si512(out + (j + k) * ld_out + i, r[k]);
  }
  for (; i < i1; ++i)
    for (int k = 0; k < 8; ++k)
      out[(j + k) * ld_out + i] = in[i * ld_in + j + k];
}

// As band8_cached, with non-temporal stores of whole aligned lines. Output row k is aligned at
// column i0 + s[k]; each stored line joins the last s[k]... elements of the previous block and
// the first of the current one. Partial lines at both ends use masked ordinary stores.
inline void band8_streaming(const u64* in, std::int64_t ld_in, u64* out, std::int64_t ld_out,
                            std::int64_t j, std::int64_t i0, std::int64_t i1) {
  const std::int64_t blocks = (i1 - i0) / 8;
  if (blocks < 2) {
    band8_cached(in, ld_in, out, ld_out, j, i0, i1, 0);
    return;
  }
  u64* orow[8];
  __m512i idx[8];
  __mmask8 head[8];
  const __m512i iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  for (int k = 0; k < 8; ++k) {
    orow[k] = out + (j + k) * ld_out + i0;
    const auto mis = (reinterpret_cast<std::uintptr_t>(orow[k]) % 64) / 8;
    const auto s = static_cast<unsigned>((8 - mis) % 8);
    idx[k] = _mm512_add_epi64(iota, _mm512_set1_epi64(s));
    head[k] = static_cast<__mmask8>((1u << s) - 1u);
  }
  const u64* src = in + i0 * ld_in + j;
  __m512i prev[8], cur[8];
  load8(src, ld_in, prev);
  transpose8x8(prev);
  for (int k = 0; k < 8; ++k)
    _mm512_mask_storeu_epi64(orow[k], head[k], prev[k]);
  for (std::int64_t b = 1; b < blocks; ++b) {
    load8(src + 8 * b * ld_in, ld_in, cur);
    transpose8x8(cur);
    for (int k = 0; k < 8; ++k) {
      // Line starting at block b-1's element s: prev[s..7], cur[0..s-1].
      const int s = __builtin_popcount(head[k]);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(orow[k] + 8 * (b - 1) + s),
                          _mm512_permutex2var_epi64(prev[k], idx[k], cur[k]));
      prev[k] = cur[k];
    }
  }
  for (int k = 0; k < 8; ++k)
    _mm512_mask_storeu_epi64(orow[k] + 8 * (blocks - 1), static_cast<__mmask8>(~head[k]), prev[k]);
  for (std::int64_t i = i0 + 8 * blocks; i < i1; ++i)
    for (int k = 0; k < 8; ++k)
      out[(j + k) * ld_out + i] = in[i * ld_in + j + k];
}

template <bool Streaming>
void transpose_u64(const u64* in, u64* out, std::int64_t rows, std::int64_t cols,
                   std::int64_t ld_in, std::int64_t ld_out) {
  const std::int64_t bands = cols / 8;
  const std::int64_t groups = (bands + kBandGroup - 1) / kBandGroup;
  const std::int64_t segments = (rows + kBandRows - 1) / kBandRows;
#pragma omp for schedule(static) nowait
  for (std::int64_t t = 0; t < groups * segments; ++t) {
    const std::int64_t g = t / segments;
    const std::int64_t i0 = (t % segments) * kBandRows;
    const std::int64_t i1 = std::min(i0 + kBandRows, rows);
    for (std::int64_t band = g * kBandGroup; band < std::min(bands, (g + 1) * kBandGroup); ++band) {
      if constexpr (Streaming)
        band8_streaming(in, ld_in, out, ld_out, 8 * band, i0, i1);
      else
        band8_cached(in, ld_in, out, ld_out, 8 * band, i0, i1, rows);
    }
  }
  // The last cols % 8 columns.
  const std::int64_t jr = 8 * bands;
  if (jr < cols) {
#pragma omp for schedule(static) nowait
    for (std::int64_t t = 0; t < segments; ++t) {
      const std::int64_t i1 = std::min((t + 1) * kBandRows, rows);
      for (std::int64_t j = jr; j < cols; ++j)
        for (std::int64_t i = t * kBandRows; i < i1; ++i)
          out[j * ld_out + i] = in[i * ld_in + j];
    }
  }
  if constexpr (Streaming)
    _mm_sfence(); // make the non-temporal stores visible before the barrier
#pragma omp barrier
}

#pragma GCC diagnostic pop
#endif // __AVX512F__

template <class T>
void transpose_team(const T* in, T* out, std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                    std::int64_t ld_out) {
#if defined(__AVX512F__)
  if constexpr (sizeof(T) == 8) {
    const auto* i8 = reinterpret_cast<const u64*>(in);
    auto* o8 = reinterpret_cast<u64*>(out);
    const bool stream =
        static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * 8 >= kStreamingBytes &&
        reinterpret_cast<std::uintptr_t>(out) % 8 == 0 && streaming_stores_enabled();
    if (stream)
      transpose_u64<true>(i8, o8, rows, cols, ld_in, ld_out);
    else
      transpose_u64<false>(i8, o8, rows, cols, ld_in, ld_out);
    return;
  }
#endif
  transpose_tiled(in, out, rows, cols, ld_in, ld_out);
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
  on_team([&] { transpose_team(in, out, rows, cols, ld_in, ld_out); });
}

void transpose(DType t, const void* in, void* out, std::int64_t rows, std::int64_t cols,
               std::int64_t ld_in, std::int64_t ld_out) {
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    transpose(static_cast<const T*>(in), static_cast<T*>(out), rows, cols, ld_in, ld_out);
  });
}

void parallel_copy(const void* src, void* dst, std::size_t n) {
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  // One contiguous, cache-line-aligned range per thread, copied by a single memcpy, as a
  // multi-threaded copy of one large buffer would be done.
  on_team([&] {
    const std::size_t nt = static_cast<std::size_t>(omp_get_num_threads());
    const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t lines = (n + 63) / 64;
    const std::size_t begin = std::min(n, lines * t / nt * 64);
    const std::size_t end = std::min(n, lines * (t + 1) / nt * 64);
    if (end > begin)
      std::memcpy(d + begin, s + begin, end - begin);
#pragma omp barrier
  });
}

std::uint64_t parallel_read(const void* src, std::size_t n) {
  const auto* s = static_cast<const unsigned char*>(src);
  std::uint64_t total = 0;
  on_team([&] {
    const std::size_t nt = static_cast<std::size_t>(omp_get_num_threads());
    const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t words = n / 8;
    const std::size_t begin = words * t / nt, end = words * (t + 1) / nt;
    // Eight independent sums so that the loop is limited by memory, not by an add chain.
    std::uint64_t acc[8] = {};
    std::size_t w = begin;
    for (; w + 8 <= end; w += 8)
      for (int k = 0; k < 8; ++k) {
        std::uint64_t x;
        std::memcpy(&x, s + 8 * (w + k), 8);
        acc[k] += x;
      }
    std::uint64_t sum = 0;
    for (; w < end; ++w) {
      std::uint64_t x;
      std::memcpy(&x, s + 8 * w, 8);
      sum += x;
    }
    if (t + 1 == nt)
      for (std::size_t b = 8 * words; b < n; ++b)
        sum += s[b];
    for (std::uint64_t a : acc)
      sum += a;
    if (omp_in_parallel() && nt > 1) {
#pragma omp atomic
      total += sum;
#pragma omp barrier
    } else {
      total += sum;
    }
  });
  return total;
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
