// OpenMP out-of-place transpose: the public entry points over the candidate kernels
// (transpose_kernel.hpp) and their plan-time choice (transpose_tuner.hpp).
//
// Memory traffic decides the speed, so the kernels aim at touching every cache line of the
// input and of the output exactly once: register blocks of whole 64-byte rows where the
// processor has AVX2 or AVX-512 (chosen at run time, whatever the build flags), tiles of input
// rows walked band by band so that neighbouring lines are still in cache, software prefetch of
// the next tile, and optionally (AVX-512) non-temporal stores. Threads own contiguous ranges of
// output rows (static schedule over bands of output rows).
#include "cpu/transpose.hpp"

#include <omp.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/throw.hpp"
#include "cpu/transpose_kernel.hpp"
#include "cpu/transpose_tuner.hpp"

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

void transpose_bytes(std::size_t element_size, const void* in, void* out, std::int64_t rows,
                     std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out) {
  on_team([&] {
    const detail::KernelParams k =
        detail::choose_kernel(element_size, in, out, rows, cols, ld_in, ld_out);
    detail::run_kernel(k, element_size, in, out, rows, cols, ld_in, ld_out);
  });
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
  static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16);
  transpose_bytes(sizeof(T), in, out, rows, cols, ld_in, ld_out);
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
