// AVX2 register-block kernels, compiled for AVX2 whatever the build flags and chosen at run
// time only on processors that have it. Integer and bit-pattern shuffles only: the bits move
// unchanged (NaN payloads and complex pairs included).
//  - 4-byte elements: 8 x 8 blocks (eight 32-byte rows).
//  - 8-byte elements: 8 x 8 blocks as four 4 x 4 quadrants, so every row load and store covers
//    a whole 64-byte line.
//  - 16-byte elements: 4 x 4 blocks as 2 x 2 groups of 128-bit lane swaps (64-byte rows).
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "cpu/transpose_kernel.hpp"

#if defined(__x86_64__)

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

#include "cpu/transpose_band.hpp"

namespace tessera::cpu::detail {

namespace {

struct Block4x8 { // 4-byte elements
  static constexpr int N = 8;
  using Word = std::uint32_t;
  static inline void move(const Word* in, std::int64_t ld_in, Word* out, std::int64_t ld_out) {
    __m256 r[8], t[8], u[8];
    for (int k = 0; k < 8; ++k)
      r[k] =
          _mm256_castsi256_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + k * ld_in)));
    for (int k = 0; k < 8; k += 2) {
      t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
      t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
      u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
      u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xEE);
      u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
      u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
    }
    for (int k = 0; k < 4; ++k) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k * ld_out),
                          _mm256_castps_si256(_mm256_permute2f128_ps(u[k], u[k + 4], 0x20)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (k + 4) * ld_out),
                          _mm256_castps_si256(_mm256_permute2f128_ps(u[k], u[k + 4], 0x31)));
    }
  }
};

// Rows a[0..3] of a 4 x 4 block of 8-byte words in, columns out.
inline void transpose4x4(__m256i a[4]) {
  const __m256i t0 = _mm256_unpacklo_epi64(a[0], a[1]);
  const __m256i t1 = _mm256_unpackhi_epi64(a[0], a[1]);
  const __m256i t2 = _mm256_unpacklo_epi64(a[2], a[3]);
  const __m256i t3 = _mm256_unpackhi_epi64(a[2], a[3]);
  a[0] = _mm256_permute2x128_si256(t0, t2, 0x20);
  a[1] = _mm256_permute2x128_si256(t1, t3, 0x20);
  a[2] = _mm256_permute2x128_si256(t0, t2, 0x31);
  a[3] = _mm256_permute2x128_si256(t1, t3, 0x31);
}

// 8-byte elements. kStreaming: non-temporal stores, so that each output row gets one whole
// 64-byte line per block written without first reading it in (the read-for-ownership that
// ordinary stores pay on lines that are only overwritten); needs output rows on 32-byte
// boundaries.
template <bool kStreaming>
struct Block8x8T {
  static constexpr int N = 8;
  using Word = std::uint64_t;
  static inline void store(Word* p, __m256i v) {
    if constexpr (kStreaming)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v);
    else
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
  static inline void move(const Word* in, std::int64_t ld_in, Word* out, std::int64_t ld_out) {
    // q[0]: rows 0-3, columns 0-3; q[1]: rows 0-3, columns 4-7; q[2], q[3]: rows 4-7.
    __m256i q[4][4];
    for (int k = 0; k < 4; ++k)
      for (int h = 0; h < 2; ++h) {
        q[h][k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + k * ld_in + 4 * h));
        q[2 + h][k] =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + (k + 4) * ld_in + 4 * h));
      }
    for (auto& quadrant : q)
      transpose4x4(quadrant);
    // Output row c (c < 4) = [q0 row c | q2 row c]; row c + 4 = [q1 row c | q3 row c].
    for (int c = 0; c < 4; ++c) {
      store(out + c * ld_out, q[0][c]);
      store(out + c * ld_out + 4, q[2][c]);
      store(out + (c + 4) * ld_out, q[1][c]);
      store(out + (c + 4) * ld_out + 4, q[3][c]);
    }
  }
};
using Block8x8 = Block8x8T<false>;
using Block8x8Streaming = Block8x8T<true>;

struct Block16x4 { // 16-byte elements
  static constexpr int N = 4;
  using Word = Word16;
  static inline void move(const Word* in, std::int64_t ld_in, Word* out, std::int64_t ld_out) {
    // a[k]: elements 0-1 of row k; b[k]: elements 2-3.
    __m256i a[4], b[4];
    for (int k = 0; k < 4; ++k) {
      a[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + k * ld_in));
      b[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + k * ld_in + 2));
    }
    const auto store = [&](int c, __m256i lo, __m256i hi) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + c * ld_out), lo);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + c * ld_out + 2), hi);
    };
    store(0, _mm256_permute2x128_si256(a[0], a[1], 0x20),
          _mm256_permute2x128_si256(a[2], a[3], 0x20));
    store(1, _mm256_permute2x128_si256(a[0], a[1], 0x31),
          _mm256_permute2x128_si256(a[2], a[3], 0x31));
    store(2, _mm256_permute2x128_si256(b[0], b[1], 0x20),
          _mm256_permute2x128_si256(b[2], b[3], 0x20));
    store(3, _mm256_permute2x128_si256(b[0], b[1], 0x31),
          _mm256_permute2x128_si256(b[2], b[3], 0x31));
  }
};

} // namespace

void run_avx2(const KernelParams& k, std::size_t element_size, const void* in, void* out,
              std::int64_t rows, std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out) {
  switch (element_size) {
  case 4:
    run_banded<Block4x8>(in, out, rows, cols, ld_in, ld_out, k);
    break;
  case 8:
    // Streaming needs every block's output rows on 32-byte boundaries: tiles start on multiples
    // of 8 rows, or where the output rows meet a line when ld_out is a multiple of one
    // (line_shift), so the output's base and row stride decide.
    if (k.streaming && ((reinterpret_cast<std::uintptr_t>(out) % 32 == 0 && ld_out % 4 == 0) ||
                        (reinterpret_cast<std::uintptr_t>(out) % 8 == 0 && ld_out % 8 == 0)))
      run_banded<Block8x8Streaming>(in, out, rows, cols, ld_in, ld_out, k, true);
    else
      run_banded<Block8x8>(in, out, rows, cols, ld_in, ld_out, k);
    break;
  default:
    run_banded<Block16x4>(in, out, rows, cols, ld_in, ld_out, k);
    break;
  }
}

} // namespace tessera::cpu::detail

#if defined(__clang__)
#pragma clang attribute pop
#elif defined(__GNUC__)
#pragma GCC pop_options
#endif

#endif // x86-64
