// The OpenMP permutation of dimensions against the serial reference: every element size, every
// permutation of ranks 2 to 4, some of ranks 5 to 8, lengths of 1 and primes, and the reduced
// layout the kernel works on.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "../permute_test_support.hpp"
#include "core/error.hpp"
#include "core/permute_layout.hpp"
#include "cpu/permute.hpp"
#include "cpu/reference.hpp"

using namespace tessera;

namespace {

using ShapeN = std::vector<std::int64_t>;
using tessera::test::all_permutations;
using tessera::test::Axes;

std::int64_t elements_of(const ShapeN& shape) {
  std::int64_t n = 1;
  for (const std::int64_t l : shape)
    n *= l;
  return n;
}

std::vector<unsigned char> random_bytes(std::size_t n, std::mt19937_64& rng) {
  std::vector<unsigned char> v(n);
  for (auto& b : v)
    b = static_cast<unsigned char>(rng());
  return v;
}

// The kernel's output equals the reference's, byte for byte.
void expect_same_as_reference(const ShapeN& shape, const Axes& axes, std::size_t esize,
                              std::mt19937_64& rng) {
  const auto bytes = static_cast<std::size_t>(elements_of(shape)) * esize;
  const std::vector<unsigned char> in = random_bytes(bytes, rng);
  std::vector<unsigned char> want(bytes, 0), got(bytes, 0xAB);
  reference::permute(in.data(), want.data(), esize, shape, axes);
  cpu::permute(in.data(), got.data(), esize, shape, axes);
  ASSERT_EQ(got, want) << "shape " << ::testing::PrintToString(shape) << " axes "
                       << ::testing::PrintToString(axes) << " element size " << esize;
}

const std::size_t kSizes[] = {1, 2, 4, 8, 16};

} // namespace

TEST(CpuPermute, ReferenceMatchesHandWorkedRank3) {
  // in (2, 3, 2) = 0..11; axes (2, 0, 1): out[k][i][j] = in[i][j][k].
  std::vector<std::int32_t> in(12), out(12);
  std::iota(in.begin(), in.end(), 0);
  reference::permute(in.data(), out.data(), 4, ShapeN{2, 3, 2}, Axes{2, 0, 1});
  const std::vector<std::int32_t> want{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11};
  EXPECT_EQ(out, want);
}

TEST(CpuPermute, LayoutMergesDimensionsThatStayTogether) {
  const PermuteLayout p = reduce_permutation(ShapeN{2, 3, 4, 5}, Axes{0, 2, 3, 1});
  EXPECT_EQ(p.shape, (ShapeN{2, 3, 20}));
  EXPECT_EQ(p.axes, (Axes{0, 2, 1}));
  const PermuteLayout ones = reduce_permutation(ShapeN{4, 1, 5, 1}, Axes{2, 3, 0, 1});
  EXPECT_EQ(ones.shape, (ShapeN{4, 5}));
  EXPECT_EQ(ones.axes, (Axes{1, 0}));
  EXPECT_TRUE(reduce_permutation(ShapeN{3, 1, 7}, Axes{1, 0, 2}).identity());
}

TEST(CpuPermute, RejectsBadAxes) {
  std::vector<unsigned char> buf(64);
  EXPECT_THROW(cpu::permute(buf.data(), buf.data() + 32, 4, ShapeN{2, 2}, Axes{0, 0}), InputError);
  EXPECT_THROW(cpu::permute(buf.data(), buf.data() + 32, 4, ShapeN{2, 2}, Axes{0}), InputError);
  EXPECT_THROW(cpu::permute(buf.data(), buf.data() + 32, 4, ShapeN{2, 2}, Axes{0, 2}), InputError);
  EXPECT_THROW(cpu::permute(buf.data(), buf.data() + 32, 3, ShapeN{2, 2}, Axes{1, 0}), InputError);
  EXPECT_THROW(
      cpu::permute(buf.data(), buf.data() + 32, 1, ShapeN(9, 1), Axes{0, 1, 2, 3, 4, 5, 6, 7, 8}),
      InputError);
}

TEST(CpuPermute, Rank1And2EveryElementSize) {
  std::mt19937_64 rng(11);
  for (const std::size_t esize : kSizes) {
    expect_same_as_reference({1}, {0}, esize, rng);
    expect_same_as_reference({257}, {0}, esize, rng);
    for (const ShapeN& s : {ShapeN{1, 1}, ShapeN{1, 131}, ShapeN{131, 1}, ShapeN{17, 31},
                            ShapeN{64, 64}, ShapeN{257, 263}})
      expect_same_as_reference(s, {1, 0}, esize, rng);
  }
}

TEST(CpuPermute, EveryPermutationOfRank3And4) {
  std::mt19937_64 rng(12);
  const ShapeN shapes3[] = {{3, 5, 7}, {1, 13, 11}, {17, 1, 19}, {23, 29, 1}, {2, 257, 131}};
  const ShapeN shapes4[] = {{2, 3, 5, 7}, {1, 7, 1, 13}, {5, 1, 11, 3}, {3, 37, 41, 2}};
  for (const std::size_t esize : kSizes) {
    for (const Axes& a : all_permutations(3))
      for (const ShapeN& s : shapes3)
        expect_same_as_reference(s, a, esize, rng);
    for (const Axes& a : all_permutations(4))
      for (const ShapeN& s : shapes4)
        expect_same_as_reference(s, a, esize, rng);
  }
}

TEST(CpuPermute, Ranks5To8) {
  std::mt19937_64 rng(13);
  for (const std::size_t esize : kSizes) {
    expect_same_as_reference({2, 3, 5, 7, 11}, {4, 2, 0, 3, 1}, esize, rng);
    expect_same_as_reference({3, 1, 5, 2, 7, 3}, {5, 0, 1, 2, 3, 4}, esize, rng);
    expect_same_as_reference({2, 3, 2, 5, 1, 3, 2}, {6, 5, 4, 3, 2, 1, 0}, esize, rng);
    expect_same_as_reference({2, 2, 3, 2, 3, 2, 2, 3}, {1, 0, 3, 2, 5, 4, 7, 6}, esize, rng);
    expect_same_as_reference({2, 2, 3, 2, 3, 2, 2, 3}, {0, 1, 2, 3, 4, 5, 7, 6}, esize, rng);
  }
  // Random permutations of random awkward shapes.
  std::uniform_int_distribution<int> len(1, 5);
  for (int trial = 0; trial < 40; ++trial) {
    const int rank = 5 + trial % 4;
    ShapeN s(static_cast<std::size_t>(rank));
    for (auto& l : s)
      l = len(rng);
    Axes a(static_cast<std::size_t>(rank));
    std::iota(a.begin(), a.end(), 0);
    std::shuffle(a.begin(), a.end(), rng);
    expect_same_as_reference(s, a, kSizes[trial % 5], rng);
  }
}

TEST(CpuPermute, LargeSlicesThroughTheTunedKernel) {
  // 2-D slices past the size where the tuned 2-D transpose takes over, with and without a batch;
  // batches of a few slices (the whole team on each) and of several per thread (whole slices
  // each).
  std::mt19937_64 rng(14);
  for (const std::size_t esize : kSizes) {
    expect_same_as_reference({3, 181, 191}, {0, 2, 1}, esize, rng);
    expect_same_as_reference({13, 181, 191}, {0, 2, 1}, esize, rng);
    expect_same_as_reference({3, 181, 7, 191}, {1, 3, 2, 0}, esize, rng);
    expect_same_as_reference({181, 5, 191}, {2, 1, 0}, esize, rng);
    expect_same_as_reference({191, 181, 2}, {1, 2, 0}, esize, rng);
  }
}

TEST(CpuPermute, SmallSlicesByRegisterBlocks) {
  // Batches of small slices (AVX-512 register blocks where the processor has them): sides that
  // are whole blocks and sides with a remainder, and arrays of 32 MiB, written with
  // non-temporal stores, at one to three threads.
  std::mt19937_64 rng(16);
  for (const std::size_t esize : {std::size_t{4}, std::size_t{8}, std::size_t{16}}) {
    expect_same_as_reference({3, 32, 5, 4, 128}, {4, 2, 0, 3, 1}, esize, rng);
    expect_same_as_reference({2, 21, 3, 5, 37}, {4, 2, 0, 3, 1}, esize, rng);
    expect_same_as_reference({7, 16, 48}, {0, 2, 1}, esize, rng);
  }
  for (int threads = 1; threads <= 3; ++threads) {
    omp_set_num_threads(threads);
    expect_same_as_reference({8, 32, 8, 16, 128}, {4, 2, 0, 3, 1}, 8, rng);
    expect_same_as_reference({16, 32, 8, 16, 128}, {4, 2, 0, 3, 1}, 4, rng);
  }
  omp_set_num_threads(2);
}

TEST(CpuPermute, SameResultAtOneToThreeThreads) {
  std::mt19937_64 rng(15);
  for (int threads = 1; threads <= 3; ++threads) {
    omp_set_num_threads(threads);
    expect_same_as_reference({7, 11, 13, 3}, {3, 1, 0, 2}, 4, rng);
    expect_same_as_reference({5, 200, 200}, {2, 0, 1}, 8, rng);
    expect_same_as_reference({13, 150, 230}, {0, 2, 1}, 4, rng); // whole slices per thread
    expect_same_as_reference({5, 7, 9, 11}, {1, 0, 2, 3}, 2, rng);
  }
}

TEST(CpuPermute, EmptyArrayMovesNothing) {
  std::vector<unsigned char> out(4, 7);
  cpu::permute(nullptr, out.data(), 4, ShapeN{3, 0, 5}, Axes{2, 1, 0});
  EXPECT_EQ(out, (std::vector<unsigned char>(4, 7)));
}
