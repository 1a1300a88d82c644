#include "ops/random_fill.hpp"

#include <complex>
#include <type_traits>

namespace tessera::ops {

std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

namespace {

template <class R>
R uniform(std::uint64_t key, std::uint64_t n) noexcept {
  const std::uint64_t z = splitmix64(key + n);
  if constexpr (std::is_same_v<R, float>)
    return 2.0f * (static_cast<float>(z >> 40) * 0x1.0p-24f) - 1.0f;
  else
    return 2.0 * (static_cast<double>(z >> 11) * 0x1.0p-53) - 1.0;
}

template <class T>
void fill(std::int64_t row0, std::int64_t rows, std::int64_t cols, std::uint64_t seed, T* a) {
  const std::uint64_t key = splitmix64(seed);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < rows; ++i) {
    const auto base = static_cast<std::uint64_t>(row0 + i) * static_cast<std::uint64_t>(cols);
    T* row = a + i * cols;
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::uint64_t n = base + static_cast<std::uint64_t>(j);
      if constexpr (std::is_floating_point_v<T>) {
        row[j] = uniform<T>(key, n);
      } else {
        using R = typename T::value_type;
        row[j] = T(uniform<R>(key, 2 * n), uniform<R>(key, 2 * n + 1));
      }
    }
  }
}

} // namespace

void random_fill_rows(DType dtype, std::int64_t row0, std::int64_t rows, std::int64_t cols,
                      std::uint64_t seed, void* block) {
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    fill(row0, rows, cols, seed, static_cast<T*>(block));
  });
}

void random_fill(DType dtype, const BlockDistribution& dist, int rank, std::uint64_t seed,
                 void* block) {
  random_fill_rows(dtype, dist.begin(rank), dist.rows(rank), dist.global().cols, seed, block);
}

} // namespace tessera::ops
