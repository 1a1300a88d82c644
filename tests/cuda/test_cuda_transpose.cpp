// The GPU transpose, the staged host pipeline and the column-piece pack/unpack against the
// serial reference, on fresh random data, awkward shapes, padded and misaligned layouts.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <numeric>

#include "bench/cuda/transpose_variants.hpp"
#include "cpu/reference.hpp"
#include "cpu/transpose.hpp"
#include "cuda/buffer.hpp"
#include "cuda/pack.hpp"
#include "cuda/staged.hpp"
#include "cuda/stream.hpp"
#include "cuda/transpose.hpp"
#include "cuda/transpose_mapped.hpp"
#include "cuda_test_util.hpp"

namespace tessera {
namespace {

using test::random_vector;

struct Case {
  std::int64_t rows, cols;
};

const Case kShapes[] = {{1, 1},    {1, 1000},  {1000, 1},   {31, 33},  {17, 31}, {64, 64},
                        {65, 129}, {130, 257}, {1000, 999}, {3, 4097}, {4099, 5}};

template <class T>
bool same_elements(const T* a, const T* b, std::size_t n) {
  return std::memcmp(a, b, n * sizeof(T)) == 0;
}

// Transposes rows × cols with the given leading dimensions and element offsets of the device
// buffers (offsets misalign the rows), and compares with the reference; padding must be untouched.
// The kernels under test: the library's choice table (variants 0 … transpose_variant_count() - 1)
// and, after them, the benchmark's comparison kernels (bench/cuda/transpose_variants.hpp).
int kernel_count() {
  return cuda::transpose_variant_count() + cuda::bench_ref::transpose_comparison_count();
}
void run_kernel(CUstream_st* s, DType t, int kernel, const void* in, void* out, std::int64_t rows,
                std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out) {
  const int table = cuda::transpose_variant_count();
  if (kernel < table)
    cuda::transpose_variant(s, t, kernel, in, out, rows, cols, ld_in, ld_out);
  else
    cuda::bench_ref::transpose_comparison(s, t, kernel - table, in, out, rows, cols, ld_in, ld_out);
}

template <class T>
void check_transpose(std::int64_t rows, std::int64_t cols, std::int64_t pad_in,
                     std::int64_t pad_out, std::int64_t off_in, std::int64_t off_out, int variant,
                     CUstream_st* s) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(::testing::Message()
               << rows << "x" << cols << " pad " << pad_in << "/" << pad_out << " offset " << off_in
               << "/" << off_out << " variant " << variant << " seed " << seed);
  const std::int64_t ld_in = cols + pad_in, ld_out = rows + pad_out;
  const std::size_t n_in = static_cast<std::size_t>(off_in + rows * ld_in);
  const std::size_t n_out = static_cast<std::size_t>(off_out + cols * ld_out);
  auto host_in = random_vector<T>(n_in, seed);
  auto poison = random_vector<T>(n_out, seed ^ 0x5555);

  cuda::DeviceBuffer din(n_in * sizeof(T)), dout(n_out * sizeof(T));
  cuda::copy(din.data(), host_in.data(), n_in * sizeof(T));
  cuda::copy(dout.data(), poison.data(), n_out * sizeof(T));
  run_kernel(s, dtype_of<T>, variant, din.as<T>() + off_in, dout.as<T>() + off_out, rows, cols,
             ld_in, ld_out);
  cuda::synchronize(s);
  std::vector<T> got(n_out);
  cuda::copy(got.data(), dout.data(), n_out * sizeof(T));

  // Expected: the poison everywhere except the transposed elements.
  std::vector<T> want = poison;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      want[off_out + j * ld_out + i] = host_in[off_in + i * ld_in + j];
  ASSERT_TRUE(same_elements(got.data(), want.data(), n_out));
}

template <class T>
class CudaTranspose : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CudaTranspose, Types);

TYPED_TEST(CudaTranspose, MatchesReferenceOnAwkwardShapes) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  for (const Case& c : kShapes) {
    const std::uint64_t seed = test::fresh_seed();
    SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.cols << " seed " << seed);
    const auto n = static_cast<std::size_t>(c.rows * c.cols);
    auto in = random_vector<TypeParam>(n, seed);
    std::vector<TypeParam> want(n), got(n);
    reference::transpose(in.data(), want.data(), c.rows, c.cols);
    cuda::DeviceBuffer din(n * sizeof(TypeParam)), dout(n * sizeof(TypeParam));
    cuda::copy(din.data(), in.data(), n * sizeof(TypeParam));
    cuda::transpose(pool[0], din.as<TypeParam>(), dout.as<TypeParam>(), c.rows, c.cols);
    cuda::synchronize(pool[0]);
    cuda::copy(got.data(), dout.data(), n * sizeof(TypeParam));
    ASSERT_TRUE(same_elements(got.data(), want.data(), n));
  }
}

TYPED_TEST(CudaTranspose, PaddedAndMisalignedLayoutsEveryTileVariant) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  const Case shapes[] = {{1, 1}, {1, 77}, {77, 1}, {31, 33}, {130, 257}, {257, 130}};
  for (int v = 0; v < kernel_count(); ++v)
    for (const Case& c : shapes) {
      check_transpose<TypeParam>(c.rows, c.cols, 0, 0, 0, 0, v, pool[0]);
      check_transpose<TypeParam>(c.rows, c.cols, 3, 5, 1, 3, v, pool[0]);
      check_transpose<TypeParam>(c.rows, c.cols, 1, 0, 0, 1, v, pool[0]);
      check_transpose<TypeParam>(c.rows, c.cols, 0, 2, 2, 0, v, pool[0]);
    }
}

TYPED_TEST(CudaTranspose, StagedHostPipelineMatchesReference) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool;
  const Case shapes[] = {{1, 1}, {1000, 999}, {33, 4097}, {4097, 33}, {130, 517}, {100, 512}};
  using cuda::StagedOutput;
  for (const StagedOutput output :
       {StagedOutput::Auto, StagedOutput::Copy, StagedOutput::Direct, StagedOutput::Mapped}) {
    // Small chunks: many tiles, several per stream, short ones at the right and bottom edges;
    // square tiles (1000 x 999), whole columns (33 x 4097) and whole rows (4097 x 33). Mapped,
    // and Auto where the shape suits it, take pinned memory through one kernel over the link.
    cuda::StagedTranspose staged(pool, 7 * 999 * sizeof(TypeParam), output);
    const bool pinned_only = output == StagedOutput::Direct || output == StagedOutput::Mapped;
    for (const Case& c : shapes) {
      const std::uint64_t seed = test::fresh_seed();
      SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.cols << " output "
                                        << static_cast<int>(output) << " seed " << seed);
      const auto n = static_cast<std::size_t>(c.rows * c.cols);
      auto in = random_vector<TypeParam>(n, seed);
      std::vector<TypeParam> want(n);
      reference::transpose(in.data(), want.data(), c.rows, c.cols);
      // Pinned (overlapping copies, or read and written by the kernel) and pageable host memory.
      cuda::PinnedBuffer pin(n * sizeof(TypeParam)), pout(n * sizeof(TypeParam));
      std::memcpy(pin.data(), in.data(), n * sizeof(TypeParam));
      const bool mapped = output == StagedOutput::Mapped ||
                          (output == StagedOutput::Auto &&
                           cuda::mapped_transpose_preferred(dtype_of<TypeParam>, pin.data(), c.rows,
                                                            c.cols, c.cols));
      const cuda::StagedTimes t =
          staged.run(dtype_of<TypeParam>, pin.data(), pout.data(), c.rows, c.cols);
      EXPECT_GT(t.chunks, 0);
      EXPECT_EQ(t.direct, output == StagedOutput::Direct);
      EXPECT_EQ(t.mapped, mapped);
      ASSERT_TRUE(same_elements(pout.as<TypeParam>(), want.data(), n));
      std::vector<TypeParam> out(n);
      if (pinned_only) {
        EXPECT_THROW(staged.run(dtype_of<TypeParam>, in.data(), out.data(), c.rows, c.cols),
                     InputError);
        continue;
      }
      const cuda::StagedTimes pageable =
          staged.run(dtype_of<TypeParam>, in.data(), out.data(), c.rows, c.cols);
      EXPECT_FALSE(pageable.direct);
      EXPECT_FALSE(pageable.mapped);
      ASSERT_TRUE(same_elements(out.data(), want.data(), n));
    }
  }
}

// The mapped kernel on sub-blocks of pinned host memory: every base offset in a 16-byte line,
// padded leading dimensions, row runs shorter and longer than a tile, partial edge tiles.
TYPED_TEST(CudaTranspose, MappedKernelOnOffsetSubBlocks) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  const Case shapes[] = {{1, 1}, {1, 300}, {300, 1}, {65, 257}, {129, 70}, {3, 1031}};
  const std::int64_t word = sizeof(TypeParam) == 16 ? 1 : 16 / sizeof(TypeParam);
  for (const Case& c : shapes)
    for (std::int64_t off = 0; off < word; ++off) {
      const std::uint64_t seed = test::fresh_seed();
      SCOPED_TRACE(::testing::Message()
                   << c.rows << "x" << c.cols << " offset " << off << " seed " << seed);
      const std::int64_t ld_in = c.cols + 3, ld_out = c.rows + 1 + off;
      const auto n_in = static_cast<std::size_t>(off + c.rows * ld_in);
      const auto n_out = static_cast<std::size_t>(off + c.cols * ld_out);
      auto in = random_vector<TypeParam>(n_in, seed);
      cuda::PinnedBuffer pin(n_in * sizeof(TypeParam)), pout(n_out * sizeof(TypeParam));
      std::memcpy(pin.data(), in.data(), n_in * sizeof(TypeParam));
      std::memset(pout.data(), 0x5a, n_out * sizeof(TypeParam));
      std::vector<TypeParam> sentinel(n_out);
      std::memcpy(sentinel.data(), pout.data(), n_out * sizeof(TypeParam));
      auto* din = static_cast<TypeParam*>(cuda::device_view_of_host(pin.data())) + off;
      auto* dout = static_cast<TypeParam*>(cuda::device_view_of_host(pout.data())) + off;
      ASSERT_TRUE(cuda::mapped_transpose_fits(dtype_of<TypeParam>, din, dout));
      cuda::transpose_mapped(pool[0], dtype_of<TypeParam>, din, dout, c.rows, c.cols, ld_in,
                             ld_out);
      cuda::synchronize(pool[0]);
      const auto* got = pout.as<TypeParam>();
      const auto* src = in.data() + off;
      for (std::int64_t j = 0; j < c.cols; ++j)
        for (std::int64_t i = 0; i < ld_out; ++i) {
          const auto at = static_cast<std::size_t>(off + j * ld_out + i);
          // The transposed element, or the padding left as it was.
          const TypeParam& want = i < c.rows ? src[i * ld_in + j] : sentinel[at];
          ASSERT_EQ(std::memcmp(&got[at], &want, sizeof(TypeParam)), 0)
              << "output row " << j << ", element " << i;
        }
    }
}

TYPED_TEST(CudaTranspose, PackAndUnpackColumnPieces) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  test::Rng rng{seed};
  for (int trial = 0; trial < 4; ++trial) {
    const std::int64_t rows = 1 + static_cast<std::int64_t>(rng.next() % 300);
    const int pieces = 1 + static_cast<int>(rng.next() % 7);
    std::vector<std::int64_t> splits(pieces + 1, 0);
    for (int q = 1; q <= pieces; ++q) // empty pieces included
      splits[q] = splits[q - 1] + static_cast<std::int64_t>(rng.next() % 90);
    const std::int64_t cols = splits[pieces], ld = cols + 3;
    const auto n = static_cast<std::size_t>(rows * ld);
    auto in = random_vector<TypeParam>(n, rng.next());
    // Expected packed buffer.
    std::vector<TypeParam> want(static_cast<std::size_t>(rows * cols));
    for (int q = 0; q < pieces; ++q) {
      const std::int64_t w = splits[q + 1] - splits[q];
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t k = 0; k < w; ++k)
          want[rows * splits[q] + i * w + k] = in[i * ld + splits[q] + k];
    }
    cuda::DeviceBuffer din(n * sizeof(TypeParam)), dpacked(want.size() * sizeof(TypeParam) + 16),
        dback(n * sizeof(TypeParam)), dsplits(splits.size() * sizeof(std::int64_t));
    cuda::copy(din.data(), in.data(), n * sizeof(TypeParam));
    cuda::copy(dback.data(), in.data(), n * sizeof(TypeParam)); // keeps the padding
    cuda::copy(dsplits.data(), splits.data(), splits.size() * sizeof(std::int64_t));
    cuda::pack_columns(pool[0], dtype_of<TypeParam>, din.data(), rows, ld,
                       dsplits.as<std::int64_t>(), pieces, dpacked.data());
    std::vector<TypeParam> packed(want.size());
    cuda::synchronize(pool[0]);
    cuda::copy(packed.data(), dpacked.data(), packed.size() * sizeof(TypeParam));
    ASSERT_TRUE(same_elements(packed.data(), want.data(), want.size()));
    // Unpack into a buffer holding other values: the pieces must land where they came from.
    cuda::memset_async(pool[0], dback.data(), 0, n * sizeof(TypeParam));
    cuda::unpack_columns(pool[0], dtype_of<TypeParam>, dpacked.data(), rows,
                         dsplits.as<std::int64_t>(), pieces, dback.data(), ld);
    std::vector<TypeParam> back(n);
    cuda::synchronize(pool[0]);
    cuda::copy(back.data(), dback.data(), n * sizeof(TypeParam));
    for (std::int64_t i = 0; i < rows; ++i)
      ASSERT_TRUE(
          same_elements(back.data() + i * ld, in.data() + i * ld, static_cast<std::size_t>(cols)))
          << "row " << i;
  }
}

// Every kernel (the automatic choice and each forced variant) on each shape class: vectors,
// skinny shapes over several chunks of the skinny kernel (short sides 1, 3, 17, 32), short
// sides just past it, primes past the wide tile (128 rows of f32), with contiguous, padded and
// offset layouts. The names the choice reports stay among the variants'.
TYPED_TEST(CudaTranspose, EveryKernelOnEveryShapeClass) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  const Case shapes[] = {{1, 9001},  {9001, 1},  {3, 4099},  {4099, 3}, {17, 2000},
                         {2000, 17}, {32, 1100}, {1100, 32}, {33, 300}, {300, 33},
                         {131, 127}, {257, 263}, {64, 2},    {2, 64}};
  for (const Case& c : shapes) {
    const int chosen = cuda::transpose_choice(dtype_of<TypeParam>, nullptr, nullptr, c.rows, c.cols,
                                              c.cols, c.rows);
    EXPECT_GT(chosen, 0);
    EXPECT_LT(chosen, cuda::transpose_variant_count());
    for (int v = 0; v < kernel_count(); ++v) {
      check_transpose<TypeParam>(c.rows, c.cols, 0, 0, 0, 0, v, pool[0]);
      check_transpose<TypeParam>(c.rows, c.cols, 0, 0, 1, 3, v, pool[0]);
      check_transpose<TypeParam>(c.rows, c.cols, 5, 3, 2, 1, v, pool[0]);
    }
  }
}

// Every kernel on prime shapes of several tiles each way (128-row tiles included) and on single
// rows and columns longer than a tile, as whole matrices and as offset sub-blocks of wider ones:
// rows then start at every position within their 128-byte lines.
TYPED_TEST(CudaTranspose, OddPrimesAndSubBlocksEveryVariant) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  const Case shapes[] = {{1, 1031}, {1031, 1}, {263, 521}, {521, 263}};
  for (int v = 0; v < kernel_count(); ++v)
    for (const Case& c : shapes) {
      check_transpose<TypeParam>(c.rows, c.cols, 0, 0, 0, 0, v, pool[0]);
      check_transpose<TypeParam>(c.rows, c.cols, 7, 13, 5, 3, v, pool[0]);
      check_transpose<TypeParam>(c.rows, c.cols, 32, 1, 31, 2, v, pool[0]);
    }
}

// One small case of each kernel, offset and padded (what compute-sanitizer runs, quickly).
TEST(CudaTransposeKernels, OneOfEachForTheSanitizers) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  const Case shapes[] = {{1100, 17}, {17, 1100}, {131, 127}};
  for (int v = 0; v < kernel_count(); ++v)
    for (const Case& c : shapes) {
      check_transpose<float>(c.rows, c.cols, 0, 0, 1, 3, v, pool[0]);
      check_transpose<std::complex<double>>(c.rows, c.cols, 5, 3, 2, 1, v, pool[0]);
    }
}

// The choice follows the shape class: 32×32 tiles for a short side of rows (16×16 threads for
// 4-byte elements), lean 64×64 tiles for cached shapes and for fewer than 128 rows, lean tall
// tiles (128 rows × 256 bytes; 64×32 for 16-byte elements) for every other large shape, aligned
// or not, tall-and-skinny included.
TEST(CudaTransposeChoice, PicksTheKernelOfTheShapeClass) {
  const auto name = [](DType t, std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                       std::int64_t ld_out) {
    return cuda::transpose_variant_name(
        t, cuda::transpose_choice(t, nullptr, nullptr, rows, cols, ld_in, ld_out));
  };
  if (cuda::transpose_variant_count() == 0)
    GTEST_SKIP() << "built without CUDA";
  EXPECT_EQ(name(DType::f32, 1000003, 17, 17, 1000003), "lean 128x64/32x8");
  EXPECT_EQ(name(DType::f32, 17, 1000003, 1000003, 17), "tile 32x32/16x16");
  EXPECT_EQ(name(DType::f64, 17, 1000003, 1000003, 17), "lean 32x32/32x8");
  EXPECT_EQ(name(DType::f32, 2053, 2039, 2039, 2053), "lean 64x64/32x8");
  EXPECT_EQ(name(DType::f64, 2053, 2039, 2039, 2053), "lean 64x64/32x8");
  EXPECT_EQ(name(DType::f64, 100, 1000003, 1000003, 100), "lean 64x64/32x8");
  EXPECT_EQ(name(DType::f32, 16411, 16363, 16363, 16411), "lean 128x64/32x8");
  EXPECT_EQ(name(DType::f32, 16384, 16384, 16384, 16384), "lean 128x64/32x8");
  EXPECT_EQ(name(DType::f64, 16411, 16363, 16363, 16411), "lean 128x32/32x8");
  EXPECT_EQ(name(DType::f64, 16384, 16384, 16384, 16384), "lean 128x32/32x8");
  EXPECT_EQ(name(DType::c128, 1000003, 17, 20, 1000003), "lean 64x32/32x8");
}

// The large prime-sided shape, for the two real types (time and memory), on one rank.
TYPED_TEST(CudaTranspose, LargePrimeShape) {
  TESSERA_REQUIRE_GPU();
  if (!std::is_floating_point_v<TypeParam> || test::world_rank() != 0)
    GTEST_SKIP() << "run for f32/f64 on rank 0 only";
  const std::int64_t rows = 16411, cols = 16363;
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const auto n = static_cast<std::size_t>(rows * cols);
  auto in = random_vector<TypeParam>(n, seed);
  std::vector<TypeParam> want(n), got(n);
  // The cache-blocked CPU backend (itself tested against the reference): the plain reference
  // loop is too slow at this size.
  cpu::transpose(in.data(), want.data(), rows, cols);
  cuda::StreamPool pool(1);
  cuda::DeviceBuffer din(n * sizeof(TypeParam)), dout(n * sizeof(TypeParam));
  cuda::copy(din.data(), in.data(), n * sizeof(TypeParam));
  cuda::transpose(pool[0], din.as<TypeParam>(), dout.as<TypeParam>(), rows, cols);
  cuda::synchronize(pool[0]);
  cuda::copy(got.data(), dout.data(), n * sizeof(TypeParam));
  ASSERT_TRUE(same_elements(got.data(), want.data(), n));
}

TEST(CudaTransposeArgs, RejectsBadLeadingDimensions) {
  TESSERA_REQUIRE_GPU();
  cuda::DeviceBuffer a(64), b(64);
  EXPECT_THROW(cuda::transpose(nullptr, DType::f32, a.data(), b.data(), 2, 4, 3, 2), InputError);
  EXPECT_THROW(cuda::transpose(nullptr, DType::f32, a.data(), b.data(), 2, 4, 4, 1), InputError);
  EXPECT_THROW(cuda::transpose(nullptr, DType::f32, a.data(), a.data(), 2, 4, 4, 2), InputError);
  EXPECT_NO_THROW(cuda::transpose(nullptr, DType::f32, a.data(), b.data(), 0, 4, 4, 0));
}

} // namespace
} // namespace tessera
