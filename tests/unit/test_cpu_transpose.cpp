// The OpenMP transpose and parallel_copy against the serial reference: every element type,
// awkward shapes, padded leading dimensions, 1-3 threads, and calls from inside a team.
#include <gtest/gtest.h>
#include <omp.h>

#include <complex>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "core/aligned_buffer.hpp"
#include "cpu/reference.hpp"
#include "cpu/transpose.hpp"
#include "cpu/transpose_kernel.hpp"
#include "cpu/transpose_tuner.hpp"

using namespace tessera;

namespace {

struct Shape2 {
  std::int64_t rows, cols;
};

const Shape2 kShapes[] = {{1, 1},      {1, 257},     {257, 1},    {17, 31},   {31, 17},
                          {2, 3},      {127, 131},   {61, 1009},  {1009, 61}, {64, 64},
                          {1000, 999}, {1201, 1031}, {1024, 1032}};

unsigned fresh_seed() {
  return std::random_device{}();
}

template <class T>
std::vector<T> random_matrix(std::size_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> d(0.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>)
      x = static_cast<T>(d(rng));
    else
      x = T(static_cast<typename T::value_type>(d(rng)),
            static_cast<typename T::value_type>(d(rng)));
  }
  return v;
}

template <class T>
class CpuTranspose : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CpuTranspose, Types);

TYPED_TEST(CpuTranspose, MatchesReferenceOnAwkwardShapesAndThreadCounts) {
  using T = TypeParam;
  // The estimated kernels here; the candidates' test below covers every kernel a trial may
  // pick, and test_cpu_wisdom the trials themselves.
  cpu::set_tuning(cpu::Tuning::Estimate);
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const int saved = omp_get_max_threads();
  for (const auto& s : kShapes) {
    const auto n = static_cast<std::size_t>(s.rows * s.cols);
    const auto in = random_matrix<T>(n, rng);
    std::vector<T> expect(n);
    reference::transpose(in.data(), expect.data(), s.rows, s.cols);
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      std::vector<T> out(n, T(-7));
      cpu::transpose(in.data(), out.data(), s.rows, s.cols);
      EXPECT_EQ(std::memcmp(out.data(), expect.data(), n * sizeof(T)), 0)
          << s.rows << "x" << s.cols << ", " << threads << " threads, seed " << seed;
    }
  }
  omp_set_num_threads(saved);
  cpu::set_tuning(cpu::Tuning::Measure);
}

TYPED_TEST(CpuTranspose, HonoursLeadingDimensionsAndLeavesPaddingAlone) {
  using T = TypeParam;
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (const auto& s : kShapes) {
    const std::int64_t ld_in = s.cols + 3, ld_out = s.rows + 5;
    const auto in = random_matrix<T>(static_cast<std::size_t>(s.rows * ld_in), rng);
    const T fill(42);
    std::vector<T> out(static_cast<std::size_t>(s.cols * ld_out), fill);
    cpu::transpose(in.data(), out.data(), s.rows, s.cols, ld_in, ld_out);
    for (std::int64_t j = 0; j < s.cols; ++j)
      for (std::int64_t i = 0; i < ld_out; ++i) {
        const T want = i < s.rows ? in[i * ld_in + j] : fill;
        if (std::memcmp(&out[j * ld_out + i], &want, sizeof(T)) != 0) // cheap per element
          FAIL() << s.rows << "x" << s.cols << " at (" << j << "," << i << "), seed " << seed;
      }
  }
}

TYPED_TEST(CpuTranspose, TypeErasedFormDispatchesOnDType) {
  using T = TypeParam;
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const std::int64_t rows = 37, cols = 53;
  const auto in = random_matrix<T>(rows * cols, rng);
  std::vector<T> expect(in.size()), out(in.size());
  reference::transpose(in.data(), expect.data(), rows, cols);
  cpu::transpose(dtype_of<T>, in.data(), out.data(), rows, cols, cols, rows);
  EXPECT_EQ(std::memcmp(out.data(), expect.data(), in.size() * sizeof(T)), 0) << "seed " << seed;
}

// Every candidate the tuner may pick on this processor (register blocks of each supported
// instruction set, tile shapes, prefetch, non-temporal stores), not only the one it picks:
// awkward shapes, padded and odd leading dimensions (every output row at a different offset
// within a cache line), output rows all at the same offset past a line (the walk then shifts its
// tiles onto the lines), complex outputs aligned only to their scalar part (off an element
// boundary: 16-byte ones then take ordinary stores, 8-byte ones the portable kernel), 1 and 3
// threads.
TYPED_TEST(CpuTranspose, EveryCandidateKernelMatchesTheReference) {
  using T = TypeParam;
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const Shape2 shapes[] = {{1, 257},   {257, 1},   {17, 31},   {127, 131},  {61, 1009},
                           {1009, 61}, {300, 264}, {256, 200}, {1030, 1040}};
  struct Layout {
    std::int64_t pad, offset; // elements added to each output row, and before the first
    bool split = false;       // the output alignof(T) more bytes further on
  };
  for (const auto& s : shapes) {
    const std::int64_t to_line = 16 - s.rows % 16 + 16; // ld_out a multiple of a line
    for (const Layout l :
         {Layout{0, 0}, Layout{1, 0}, Layout{3, 0}, Layout{4, 0}, Layout{to_line, 1},
          Layout{to_line, 3}, Layout{1, 0, true}, Layout{to_line, 1, true}}) {
      if (l.split && alignof(T) == sizeof(T))
        continue; // no such output: the element is its own alignment
      const std::int64_t ld_in = s.cols + l.pad, ld_out = s.rows + l.pad;
      const auto in = random_matrix<T>(static_cast<std::size_t>(s.rows * ld_in), rng);
      const T fill(-1);
      // The output starts on a 64-byte line (plus the layout's offset), so that row strides
      // that are multiples of 32 bytes take the non-temporal store paths (which need aligned
      // rows) and the others do not.
      const auto n_out = static_cast<std::size_t>(s.cols * ld_out);
      const AlignedBuffer storage((n_out + static_cast<std::size_t>(l.offset) + 1) * sizeof(T),
                                  "the transposed matrix");
      const std::size_t before =
          static_cast<std::size_t>(l.offset) * sizeof(T) + (l.split ? alignof(T) : 0);
      const std::span<T> out(reinterpret_cast<T*>(storage.as<unsigned char>() + before), n_out);
      // The expected output, padding included, once for all the kernels: each kernel's output
      // is then one comparison of bytes (element by element only to report a mismatch).
      std::vector<T> want(n_out, fill);
      for (std::int64_t j = 0; j < s.cols; ++j)
        for (std::int64_t i = 0; i < s.rows; ++i)
          want[static_cast<std::size_t>(j * ld_out + i)] = in[i * ld_in + j];
      for (const auto& kernel : cpu::detail::candidates(sizeof(T))) {
        std::fill(out.begin(), out.end(), fill);
        const int threads = l.pad == 1 || l.offset == 3 ? 3 : 1;
#pragma omp parallel num_threads(threads)
        cpu::detail::run_kernel(kernel, sizeof(T), in.data(), out.data(), s.rows, s.cols, ld_in,
                                ld_out);
        if (std::memcmp(out.data(), want.data(), n_out * sizeof(T)) == 0)
          continue;
        std::size_t k = 0;
        while (std::memcmp(&out[k], &want[k], sizeof(T)) == 0)
          ++k;
        FAIL() << cpu::detail::kernel_name(kernel) << ", " << s.rows << "x" << s.cols << " pad "
               << l.pad << " offset " << l.offset << (l.split ? " split" : "") << " at ("
               << k / static_cast<std::size_t>(ld_out) << ","
               << k % static_cast<std::size_t>(ld_out) << "), seed " << seed;
      }
    }
  }
}

TEST(CpuTransposeKernels, NamesRoundTripAndNonsenseIsRefused) {
  for (std::size_t size : {4, 8, 16})
    for (const auto& k : cpu::detail::candidates(size)) {
      const auto back = cpu::detail::parse_kernel_name(cpu::detail::kernel_name(k));
      ASSERT_TRUE(back.has_value()) << cpu::detail::kernel_name(k);
      EXPECT_TRUE(*back == k) << cpu::detail::kernel_name(k);
    }
  for (const char* bad : {"", "avx2", "avx2-r64", "avx2-r0-b32", "portable-r32-nt", "sse-r64",
                          "portable-r32-b8", "avx512-r64-b32-p-nt-x", "avx2-r99999-b32"})
    EXPECT_FALSE(cpu::detail::parse_kernel_name(bad).has_value()) << bad;
}

TEST(CpuTransposeTeam, WorksAsAWorksharingLoopInsideAParallelRegion) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const std::int64_t rows = 301, cols = 211;
  const auto in = random_matrix<double>(rows * cols, rng);
  std::vector<double> expect(in.size()), out(in.size());
  reference::transpose(in.data(), expect.data(), rows, cols);
#pragma omp parallel num_threads(3)
  cpu::transpose(in.data(), out.data(), rows, cols);
  EXPECT_EQ(std::memcmp(out.data(), expect.data(), in.size() * sizeof(double)), 0)
      << "seed " << seed;
}

TEST(CpuTransposeEdge, EmptyShapesAreNoOpsAndBadLeadingDimensionsAreRejected) {
  std::vector<double> a(4, 1.0), b(4, 2.0);
  cpu::transpose(a.data(), b.data(), 0, 4);
  cpu::transpose(a.data(), b.data(), 4, 0);
  EXPECT_EQ(b, std::vector<double>(4, 2.0));
  EXPECT_ANY_THROW(cpu::transpose(a.data(), b.data(), 2, 2, 1, 2));
  EXPECT_ANY_THROW(cpu::transpose(a.data(), b.data(), 2, 2, 2, 1));
}

TEST(CpuParallelCopy, CopiesEveryByteForAnyLengthAndThreadCount) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const int saved = omp_get_max_threads();
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4097},
                        (std::size_t{1} << 20) + 13, (std::size_t{3} << 20) + 1}) {
    std::vector<unsigned char> src(n), dst(n, 0);
    for (auto& c : src)
      c = static_cast<unsigned char>(rng());
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      std::fill(dst.begin(), dst.end(), 0);
      cpu::parallel_copy(src.data(), dst.data(), n);
      EXPECT_EQ(src, dst) << n << " bytes, " << threads << " threads, seed " << seed;
    }
  }
  omp_set_num_threads(saved);
}

} // namespace
