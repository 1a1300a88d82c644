// Write → read back of row-distributed matrices through H5File / h5_matrix, for every element
// type and the awkward shapes, with collective MPI-IO and with the serial (turn-taking) path.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <complex>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "core/block_distribution.hpp"
#include "core/dtype.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"

namespace tessera::io {
namespace {

using test::IoModeScope;
using test::TempDir;

// The modes under test: "" is the default (collective with this parallel HDF5), "serial"
// forces the ranks to take turns.
const char* const modes[] = {"", "serial"};

template <class T>
void round_trip(const std::string& mode, Shape shape, const WriteOptions& opts = {}) {
  IoModeScope scope(mode);
  TempDir dir;
  const std::uint64_t seed = test::shared_seed();
  SCOPED_TRACE("mode '" + mode + "', dtype " + std::string(dtype_name(dtype_of<T>)) + ", shape " +
               shape.str() + ", seed " + std::to_string(seed));
  const int rank = test::rank_of();
  const int size = test::size_of();
  const BlockDistribution dist(shape, size);
  const auto mine = test::random_block<T>(seed, dist.begin(rank), dist.rows(rank), 0, shape.cols);
  const std::string name = dir.file("m.h5");

  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    EXPECT_EQ(f.parallel(), mode.empty());
    write_rows(f, "/group/A", dist, rank, dtype_of<T>, mine.data(), opts);
    EXPECT_TRUE(last_transfer_was_collective()) << "the write fell back to independent I/O";
    f.commit();
  }

  H5File f = H5File::open_read(name, MPI_COMM_WORLD);
  const DatasetInfo info = inspect_dataset(f, "/group/A");
  EXPECT_EQ(info.shape, shape);
  EXPECT_EQ(info.dtype, dtype_of<T>);

  std::vector<T> back(mine.size());
  read_rows(f, "/group/A", dist, rank, dtype_of<T>, back.data());
  EXPECT_TRUE(last_transfer_was_collective()) << "the read fell back to independent I/O";
  // memcmp must not see the null data() of an empty block (a rank without rows).
  EXPECT_TRUE(mine.empty() || std::memcmp(back.data(), mine.data(), mine.size() * sizeof(T)) == 0)
      << "rank " << rank << " read back other values than it wrote";

  // Every rank reads the whole matrix: the rows landed where they belong.
  std::vector<T> all(static_cast<std::size_t>(shape.size()));
  read_block(f, "/group/A", {0, shape.rows, 0, shape.cols}, dtype_of<T>, all.data());
  const auto expected = test::random_block<T>(seed, 0, shape.rows, 0, shape.cols);
  EXPECT_EQ(std::memcmp(all.data(), expected.data(), all.size() * sizeof(T)), 0)
      << "the global matrix differs from the one written";
}

using Case = std::tuple<const char*, DType, Shape>;

class RoundTrip : public testing::TestWithParam<Case> {};

TEST_P(RoundTrip, WriteThenReadBack) {
  const auto& [mode, dtype, shape] = GetParam();
  dispatch_dtype(dtype, [&](auto tag) { round_trip<decltype(tag)>(mode, shape); });
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  const auto& [mode, dtype, shape] = info.param;
  return std::string(*mode ? mode : "collective") + "_" + std::string(dtype_name(dtype)) + "_" +
         std::to_string(shape.rows) + "x" + std::to_string(shape.cols);
}

// 1x1 and 2x5 leave ranks without rows at 2–4 ranks.
INSTANTIATE_TEST_SUITE_P(
    Shapes, RoundTrip,
    testing::Combine(testing::ValuesIn(modes),
                     testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                     testing::Values(Shape{1, 1}, Shape{1, 13}, Shape{11, 1}, Shape{2, 5},
                                     Shape{17, 31}, Shape{1000, 999})),
    case_name);

class Modes : public testing::TestWithParam<const char*> {};

TEST_P(Modes, ChunkedAndDeflated) {
  round_trip<double>(GetParam(), {17, 31}, {{.chunk_rows = 4, .chunk_cols = 7, .deflate = 4}});
  round_trip<std::complex<float>>(GetParam(), {1000, 999}, {{.deflate = 1}});
  round_trip<float>(GetParam(), {3, 5}, {{.chunk_rows = 100, .chunk_cols = 0, .deflate = 0}});
}

// f32 in the file, f64 in memory: HDF5 converts (exactly, in this direction).
TEST_P(Modes, ReadsF32AsF64) {
  IoModeScope scope(GetParam());
  TempDir dir;
  const std::uint64_t seed = test::shared_seed();
  const Shape shape{17, 31};
  const int rank = test::rank_of();
  const BlockDistribution dist(shape, test::size_of());
  const auto mine = test::random_block<float>(seed, dist.begin(rank), dist.rows(rank), 0, 31);
  {
    H5File f = H5File::create(dir.file("f.h5"), MPI_COMM_WORLD);
    write_rows(f, "/A", dist, rank, DType::f32, mine.data());
    f.commit();
  }
  H5File f = H5File::open_read(dir.file("f.h5"), MPI_COMM_WORLD);
  std::vector<double> back(mine.size());
  read_rows(f, "/A", dist, rank, DType::f64, back.data());
  for (std::size_t k = 0; k < back.size(); ++k)
    ASSERT_EQ(back[k], static_cast<double>(mine[k])) << "element " << k << ", seed " << seed;
#if H5_VERS_MAJOR == 1 && H5_VERS_MINOR < 14
  // HDF5 before 1.14 falls back to independent I/O when it converts types: the check sees it.
  if (f.parallel()) {
    EXPECT_FALSE(last_transfer_was_collective());
  }
#endif
}

// Hyperslabs that are not row blocks: each rank writes a block of columns, then reads a
// block of rows and columns in the middle.
TEST_P(Modes, ColumnBlocksAndSubRectangles) {
  IoModeScope scope(GetParam());
  TempDir dir;
  const std::uint64_t seed = test::shared_seed();
  const int rank = test::rank_of();
  const Shape shape{23, 37};
  const BlockDistribution cols({shape.cols, shape.rows}, test::size_of());
  const Hyperslab mine{0, shape.rows, cols.begin(rank), cols.rows(rank)};
  const auto block =
      test::random_block<std::complex<double>>(seed, 0, shape.rows, mine.col0, mine.cols);
  {
    H5File f = H5File::create(dir.file("c.h5"), MPI_COMM_WORLD);
    create_dataset(f, "/B", shape, DType::c128);
    write_block(f, "/B", mine, DType::c128, block.data());
    EXPECT_TRUE(last_transfer_was_collective());
    f.commit();
  }
  H5File f = H5File::open_read(dir.file("c.h5"), MPI_COMM_WORLD);
  const Hyperslab middle{3 + rank, 5, 2 * rank, 11};
  std::vector<std::complex<double>> back(static_cast<std::size_t>(middle.size()));
  read_block(f, "/B", middle, DType::c128, back.data());
  EXPECT_TRUE(last_transfer_was_collective());
  const auto expected = test::random_block<std::complex<double>>(seed, middle.row0, middle.rows,
                                                                 middle.col0, middle.cols);
  EXPECT_EQ(back, expected) << "seed " << seed;
}

INSTANTIATE_TEST_SUITE_P(IoModes, Modes, testing::ValuesIn(modes), test::mode_name);

} // namespace
} // namespace tessera::io
