// The GPU permutation of dimensions against the serial reference, on fresh random data: every
// permutation of ranks 3 and 4 and some of ranks 2 and 5 to 8, every element size, lengths of 1,
// primes and sides that are no multiple of a tile, batches longer than a grid dimension, pointers
// aligned to the element only; the bytes around the output are checked untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "../permute_test_support.hpp"
#include "core/error.hpp"
#include "core/permute_layout.hpp"
#include "cpu/reference.hpp"
#include "cuda/buffer.hpp"
#include "cuda/permute.hpp"
#include "cuda/stream.hpp"
#include "cuda_test_util.hpp"

namespace tessera {
namespace {

using ShapeN = std::vector<std::int64_t>;
using tessera::test::all_permutations;
using tessera::test::Axes;

constexpr std::size_t kSizes[] = {1, 2, 4, 8, 16};

std::int64_t elements_of(const ShapeN& shape) {
  std::int64_t n = 1;
  for (const std::int64_t l : shape)
    n *= l;
  return n;
}

std::vector<unsigned char> random_bytes(std::size_t n, std::uint64_t seed) {
  test::Rng r{seed};
  std::vector<unsigned char> v(n);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t x = r.next();
    for (int k = 0; k < 8; ++k)
      v[i + static_cast<std::size_t>(k)] = static_cast<unsigned char>(x >> (8 * k));
  }
  for (; i < n; ++i)
    v[i] = static_cast<unsigned char>(r.next());
  return v;
}

// Permutes on the device, `offset` elements into both buffers (misaligning them for words wider
// than an element), with `guard` poisoned elements after the output; compares with the reference
// byte for byte, guards included.
class Checker {
public:
  Checker() : stream_(cuda::make_stream()) {}

  void check(const ShapeN& shape, const Axes& axes, std::size_t esize, std::int64_t offset = 0) {
    const std::uint64_t seed = test::fresh_seed();
    SCOPED_TRACE(::testing::Message()
                 << "shape " << ::testing::PrintToString(shape) << " axes "
                 << ::testing::PrintToString(axes) << " element size " << esize << " offset "
                 << offset << " kernel " << cuda::permute_kernel(esize, shape, axes) << " seed "
                 << seed);
    constexpr std::size_t guard = 64;
    const auto bytes = static_cast<std::size_t>(elements_of(shape)) * esize;
    const std::size_t off = static_cast<std::size_t>(offset) * esize;
    const std::size_t total = off + bytes + guard * esize;
    const std::vector<unsigned char> in = random_bytes(total, seed);
    const std::vector<unsigned char> poison = random_bytes(total, seed ^ 0x5555u);
    std::vector<unsigned char> want = poison;
    reference::permute(in.data() + off, want.data() + off, esize, shape, axes);

    in_.reserve(total);
    out_.reserve(total);
    auto* din = static_cast<unsigned char*>(in_.data());
    auto* dout = static_cast<unsigned char*>(out_.data());
    cuda::copy(din, in.data(), total);
    cuda::copy(dout, poison.data(), total);
    cuda::permute(stream_.get(), din + off, dout + off, esize, shape, axes);
    cuda::synchronize(stream_.get());
    std::vector<unsigned char> got(total);
    cuda::copy(got.data(), dout, total);
    if (got != want) {
      const auto first = std::mismatch(got.begin(), got.end(), want.begin()).first - got.begin();
      FAIL() << "first differing byte " << first << " of " << total << " (output bytes " << off
             << " to " << off + bytes << ")";
    }
  }

private:
  cuda::unique_stream stream_;
  cuda::DeviceBuffer in_, out_;
};

TEST(CudaPermute, EveryPermutationOfRanks3And4) {
  TESSERA_REQUIRE_GPU();
  Checker c;
  // Walks (sides under 16), tiles of each shape with partial edges, lengths of 1, primes.
  const ShapeN shapes3[] = {{3, 5, 7}, {1, 37, 41}, {17, 1, 130}, {7, 67, 131}, {2, 129, 260}};
  const ShapeN shapes4[] = {{2, 3, 5, 7}, {3, 1, 19, 23}, {5, 33, 2, 71}, {2, 17, 65, 40}};
  for (const std::size_t e : kSizes) {
    for (const ShapeN& s : shapes3)
      for (const Axes& a : all_permutations(3))
        c.check(s, a, e);
    for (const ShapeN& s : shapes4)
      for (const Axes& a : all_permutations(4))
        c.check(s, a, e);
  }
}

TEST(CudaPermute, HigherRanks) {
  TESSERA_REQUIRE_GPU();
  Checker c;
  const struct {
    ShapeN shape;
    Axes axes;
  } cases[] = {
      {{131, 67}, {1, 0}},
      {{1000003}, {0}},
      {{3, 4, 5, 6, 7}, {4, 2, 0, 3, 1}},
      {{2, 17, 3, 19, 5}, {0, 3, 1, 4, 2}},
      {{5, 1, 33, 2, 40}, {4, 3, 2, 1, 0}},
      {{2, 3, 2, 5, 2, 7}, {5, 0, 4, 1, 3, 2}},
      {{3, 2, 1, 4, 5, 2, 3}, {6, 5, 4, 3, 2, 1, 0}},
      {{2, 3, 2, 3, 2, 3, 2, 5}, {1, 0, 3, 2, 5, 4, 7, 6}},
      {{2, 2, 3, 2, 2, 3, 2, 37}, {7, 6, 5, 4, 3, 2, 1, 0}},
      {{2, 2, 2, 2, 2, 2, 2, 2}, {2, 7, 0, 5, 1, 6, 3, 4}},
  };
  for (const std::size_t e : kSizes)
    for (const auto& x : cases)
      c.check(x.shape, x.axes, e);
}

// Word widths of the row copies and the walk come from the pointers; the tiles take any element
// alignment.
TEST(CudaPermute, PointersAlignedToTheElementOnly) {
  TESSERA_REQUIRE_GPU();
  Checker c;
  for (const std::size_t e : kSizes)
    for (const std::int64_t offset : {1, 3}) {
      c.check({6, 10, 8}, {1, 0, 2}, e, offset);    // rows of 8 elements
      c.check({3, 70, 1030}, {1, 0, 2}, e, offset); // long rows
      c.check({4, 50, 70}, {0, 2, 1}, e, offset);   // tiles
      c.check({40, 3, 7}, {0, 2, 1}, e, offset);    // walk
    }
}

// Long batches: more rows or matrices than a grid dimension takes, long rows of several runs,
// tall tiles over many matrices.
TEST(CudaPermute, LongBatchesAndRows) {
  TESSERA_REQUIRE_GPU();
  Checker c;
  c.check({70001, 16, 17}, {0, 2, 1}, 1); // 70001 tiled matrices
  c.check({2, 40000, 3}, {1, 0, 2}, 4);   // 80000 rows of 3
  c.check({3, 5, 3000}, {1, 0, 2}, 2);    // rows of several runs
  c.check({3, 5, 3001}, {1, 0, 2}, 1);
  c.check({3, 300, 257}, {0, 2, 1}, 4); // tall tiles, partial edges
  c.check({5, 130, 70}, {0, 2, 1}, 8);
  c.check({4, 70, 33}, {0, 2, 1}, 16);
  c.check({100003, 3}, {1, 0}, 4); // one narrow matrix
  c.check({3, 100003}, {1, 0}, 2);
  c.check({50021, 2, 3}, {0, 2, 1}, 8); // a long batch of tiny matrices (the walk)
}

// 1- and 2-byte elements moved as words: whole tiles, partial edge tiles (sides a multiple of the
// elements per word, not of the tile), batches, and the fallback to the scalar tiles where a side,
// a stride or a pointer is off the word.
TEST(CudaPermute, NarrowElementsAsWords) {
  TESSERA_REQUIRE_GPU();
  Checker c;
  const struct {
    ShapeN shape;
    Axes axes;
  } cases[] = {
      {{3, 132, 260}, {0, 2, 1}},
      {{2, 256, 128}, {0, 2, 1}},
      {{520, 136}, {1, 0}},
      {{4, 68, 2, 36}, {2, 3, 0, 1}},
      {{2, 64, 4, 200}, {0, 3, 2, 1}},
      {{6, 36, 4, 44}, {3, 1, 0, 2}},
      {{3, 130, 66}, {0, 2, 1}},  // shorts as words; bytes on the scalar tiles
      {{2, 133, 260}, {0, 2, 1}}, // an odd side: the scalar tiles
  };
  for (const std::size_t e : {std::size_t{1}, std::size_t{2}})
    for (const auto& x : cases) {
      c.check(x.shape, x.axes, e);
      c.check(x.shape, x.axes, e, 1); // pointers off the word: the scalar tiles
    }
  EXPECT_EQ(cuda::permute_kernel(1, ShapeN{3, 132, 260}, Axes{0, 2, 1}),
            "tiles 128x128 (4 bytes a word)");
  EXPECT_EQ(cuda::permute_kernel(2, ShapeN{3, 130, 66}, Axes{0, 2, 1}),
            "tiles 128x64 (2 shorts a word)");
  EXPECT_EQ(cuda::permute_kernel(1, ShapeN{3, 130, 66}, Axes{0, 2, 1}), "tiles 64x64");
}

// The kernel each class of shape gets: what the cases above cover.
TEST(CudaPermute, KernelChoice) {
  TESSERA_REQUIRE_GPU();
  EXPECT_EQ(cuda::permute_kernel(4, ShapeN{3, 1, 7}, Axes{1, 0, 2}), "copy");
  EXPECT_EQ(cuda::permute_kernel(4, ShapeN{3, 0, 7}, Axes{1, 0, 2}), "none");
  EXPECT_EQ(cuda::permute_kernel(4, ShapeN{3, 4, 7}, Axes{1, 0, 2}), "rows");
  EXPECT_EQ(cuda::permute_kernel(4, ShapeN{64, 256, 256}, Axes{1, 2, 0}), "transpose");
  EXPECT_EQ(cuda::permute_kernel(4, ShapeN{3, 300, 300}, Axes{0, 2, 1}), "tiles 128x64");
  EXPECT_EQ(cuda::permute_kernel(8, ShapeN{3, 100, 100}, Axes{0, 2, 1}), "tiles 64x64");
  EXPECT_EQ(cuda::permute_kernel(1, ShapeN{3, 300, 300}, Axes{0, 2, 1}),
            "tiles 128x128 (4 bytes a word)");
  EXPECT_EQ(cuda::permute_kernel(1, ShapeN{3, 300, 302}, Axes{0, 2, 1}), "tiles 64x64");
  EXPECT_EQ(cuda::permute_kernel(1, ShapeN{3, 60, 300}, Axes{0, 2, 1}), "tiles 32x32");
  EXPECT_EQ(cuda::permute_kernel(4, ShapeN{3, 40, 40}, Axes{0, 2, 1}), "tiles 32x32");
  EXPECT_EQ(cuda::permute_kernel(4, ShapeN{3, 40, 7}, Axes{0, 2, 1}), "walk");
  EXPECT_EQ(cuda::permute_kernel(2, ShapeN{300, 300}, Axes{1, 0}),
            "tiles 128x64 (2 shorts a word)");
  EXPECT_EQ(cuda::permute_kernel(2, ShapeN{301, 300}, Axes{1, 0}), "tiles 64x64");
  EXPECT_EQ(cuda::permute_kernel(2, ShapeN{60, 300}, Axes{1, 0}),
            "tiles 32x32"); // under half a tile
}

TEST(CudaPermute, HostResident) {
  TESSERA_REQUIRE_GPU();
  cuda::HostPermute hp;
  const struct {
    ShapeN shape;
    Axes axes;
    std::size_t esize;
  } cases[] = {{{3, 5, 7}, {2, 0, 1}, 4},
               {{17, 33, 65}, {1, 2, 0}, 8},
               {{2, 3, 4, 5}, {3, 1, 0, 2}, 1},
               {{40, 50, 60}, {0, 2, 1}, 16}}; // the buffers grow between runs
  for (const auto& x : cases) {
    const auto bytes = static_cast<std::size_t>(elements_of(x.shape)) * x.esize;
    const std::vector<unsigned char> in = random_bytes(bytes, test::fresh_seed());
    std::vector<unsigned char> want(bytes), got(bytes, 0xAB);
    reference::permute(in.data(), want.data(), x.esize, x.shape, x.axes);
    hp.run(in.data(), got.data(), x.esize, x.shape, x.axes);
    EXPECT_EQ(got, want) << ::testing::PrintToString(x.shape) << " "
                         << ::testing::PrintToString(x.axes);
  }
}

TEST(CudaPermute, RejectsBadArguments) {
  TESSERA_REQUIRE_GPU();
  const cuda::unique_stream s = cuda::make_stream();
  cuda::DeviceBuffer in(1024), out(1024);
  EXPECT_THROW(cuda::permute(s.get(), in.data(), out.data(), 3, ShapeN{4, 5}, Axes{1, 0}),
               InputError);
  EXPECT_THROW(cuda::permute(s.get(), in.data(), out.data(), 4, ShapeN{4, 5}, Axes{0, 0}),
               InputError);
  EXPECT_THROW(cuda::permute(s.get(), in.data(), in.data(), 4, ShapeN{4, 5}, Axes{1, 0}),
               InputError);
  EXPECT_THROW(
      cuda::permute(s.get(), in.as<unsigned char>() + 2, out.data(), 4, ShapeN{4, 5}, Axes{1, 0}),
      InputError);
  EXPECT_THROW(cuda::permute(s.get(), in.data(), out.data(), 4, ShapeN{2, 2, 2, 2, 2, 2, 2, 2, 2},
                             Axes{0, 1, 2, 3, 4, 5, 6, 7, 8}),
               InputError);
}

} // namespace
} // namespace tessera
