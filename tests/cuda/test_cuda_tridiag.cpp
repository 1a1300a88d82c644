// GPU batched tridiagonal solves against the CPU backend, bit for bit (both replay the same
// operation sequence), in the row and interleaved layouts, general, cyclic and constant.
#include <gtest/gtest.h>

#include "cpu/tridiag.hpp"
#include "cuda/buffer.hpp"
#include "cuda/stream.hpp"
#include "cuda/tridiag.hpp"
#include "cuda_test_util.hpp"

namespace tessera {
namespace {

struct Batch {
  std::vector<double> a, b, c, d;
};

// Diagonally dominant systems stored in `layout` (strides may leave gaps, filled with noise).
Batch random_batch(const BatchLayout& L, std::size_t size, std::uint64_t seed) {
  test::Rng r{seed};
  Batch x{std::vector<double>(size), std::vector<double>(size), std::vector<double>(size),
          std::vector<double>(size)};
  for (std::size_t k = 0; k < size; ++k) {
    x.a[k] = r.uniform();
    x.c[k] = r.uniform();
    x.b[k] = 2.5 + r.uniform();
    x.d[k] = r.wide();
  }
  return x;
}

std::vector<BatchLayout> layouts(std::int64_t n, std::int64_t count) {
  return {BatchLayout::rows(n, count), BatchLayout::rows(n, count, n + 3),
          BatchLayout::interleaved(n, count), BatchLayout::interleaved(n, count, count + 5)};
}

std::size_t extent(const BatchLayout& L) {
  if (L.n == 0 || L.count == 0)
    return 1;
  return static_cast<std::size_t>((L.count - 1) * L.system_stride + (L.n - 1) * L.element_stride +
                                  1);
}

struct Device {
  cuda::DeviceBuffer a, b, c, d;
  explicit Device(const Batch& x)
      : a(x.a.size() * 8), b(x.b.size() * 8), c(x.c.size() * 8), d(x.d.size() * 8) {
    cuda::copy(a.data(), x.a.data(), x.a.size() * 8);
    cuda::copy(b.data(), x.b.data(), x.b.size() * 8);
    cuda::copy(c.data(), x.c.data(), x.c.size() * 8);
    cuda::copy(d.data(), x.d.data(), x.d.size() * 8);
  }
  std::vector<double> solution(std::size_t n) const {
    std::vector<double> v(n);
    cuda::device_synchronize();
    cuda::copy(v.data(), d.data(), n * 8);
    return v;
  }
};

TEST(CudaTridiag, GeneralAndCyclicMatchTheCpuBackend) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  cuda::DeviceBuffer scratch;
  for (std::int64_t n : {1, 2, 3, 17, 200})
    for (std::int64_t count : {1, 33, 300})
      for (const auto& L : layouts(n, count)) {
        const std::uint64_t seed = test::fresh_seed();
        SCOPED_TRACE(::testing::Message()
                     << "n " << n << " count " << count << " strides " << L.system_stride << "/"
                     << L.element_stride << " seed " << seed);
        const std::size_t size = extent(L);
        const Batch x = random_batch(L, size, seed);
        for (bool cyclic : {false, true}) {
          Batch want = x;
          Device dev(x);
          if (cyclic) {
            cpu::cyclic_batched(want.a.data(), want.b.data(), want.c.data(), want.d.data(), L);
            cuda::cyclic_batched(pool[0], dev.a.as<double>(), dev.b.as<double>(),
                                 dev.c.as<double>(), dev.d.as<double>(), L, scratch);
          } else {
            cpu::thomas_batched(want.a.data(), want.b.data(), want.c.data(), want.d.data(), L);
            cuda::thomas_batched(pool[0], dev.a.as<double>(), dev.b.as<double>(),
                                 dev.c.as<double>(), dev.d.as<double>(), L, scratch);
          }
          ASSERT_EQ(test::first_difference(dev.solution(size), want.d), -1)
              << (cyclic ? "cyclic" : "thomas");
        }
      }
}

TEST(CudaTridiag, ConstantCoefficientsMatchTheCpuBackend) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  for (std::int64_t n : {1, 2, 3, 64, 257})
    for (bool periodic : {false, true}) {
      const cpu::ConstTridiag f(-0.4, 1.9, -0.45, n, periodic);
      const cuda::DeviceTridiag g(f);
      for (const auto& L : layouts(n, 129)) {
        const std::uint64_t seed = test::fresh_seed();
        SCOPED_TRACE(::testing::Message()
                     << "n " << n << (periodic ? " periodic" : "") << " strides " << L.system_stride
                     << "/" << L.element_stride << " seed " << seed);
        const std::size_t size = extent(L);
        auto x = test::random_vector<double>(size, seed);
        auto want = x;
        f.solve(want.data(), L);
        cuda::DeviceBuffer dx(size * 8);
        cuda::copy(dx.data(), x.data(), size * 8);
        g.solve(pool[0], dx.as<double>(), L);
        std::vector<double> got(size);
        cuda::synchronize(pool[0]);
        cuda::copy(got.data(), dx.data(), size * 8);
        ASSERT_EQ(test::first_difference(got, want), -1);
      }
    }
}

} // namespace
} // namespace tessera
