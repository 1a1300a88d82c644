// Out-of-core transpose against the in-memory TransposePlan and the serial reference: every
// element type, the awkward shapes, staging depths 1 and 3, chunks far smaller than the
// dataset (from a memory limit or an explicit height), collective and serial HDF5 modes.
// Peak memory: test_out_of_core_memory.cpp (a process of its own).
#include <gtest/gtest.h>
#include <mpi.h>

#include <complex>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "core/block_distribution.hpp"
#include "core/dtype.hpp"
#include "cpu/reference.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"
#include "mpi/transpose_plan.hpp"
#include "ops/out_of_core.hpp"

namespace tessera::ops {
namespace {

using test::TempDir;

// Writes the seeded random matrix as `ref`, each rank its rows.
template <class T>
void write_matrix(const io::DatasetRef& ref, Shape shape, std::uint64_t seed) {
  const int rank = test::rank_of();
  const BlockDistribution dist(shape, test::size_of());
  const auto mine = test::random_block<T>(seed, dist.begin(rank), dist.rows(rank), 0, shape.cols);
  io::H5File f = io::H5File::create(ref.file, MPI_COMM_WORLD);
  if (shape.empty())
    io::create_dataset(f, ref.path, shape, dtype_of<T>); // HDF5 1.10 fails writing no elements
  else
    write_rows(f, ref.path, dist, rank, dtype_of<T>, mine.data());
  f.commit();
}

// Transposes out of core and checks this rank's rows of the output bit for bit against the
// in-memory plan and the reference.
template <class T>
OutOfCoreReport check_transpose(Shape shape, OutOfCoreOptions o, const std::string& mode = "") {
  test::IoModeScope scope(mode);
  TempDir dir;
  const std::uint64_t seed = test::shared_seed();
  SCOPED_TRACE(testing::Message() << "dtype " << dtype_name(dtype_of<T>) << ", shape "
                                  << shape.str() << ", chunks of "
                                  << chunk_shape_name(o.chunk_shape) << ", depth "
                                  << o.staging_depth << ", chunk_rows " << o.chunk_rows
                                  << ", chunk_cols " << o.chunk_cols << ", memory_limit "
                                  << o.memory_limit << ", mode '" << mode << "', seed " << seed);
  const io::DatasetRef in{dir.file("a.h5"), "/data/A"}, out{dir.file("at.h5"), "/AT"};
  write_matrix<T>(in, shape, seed);

  o.progress = false;
  const OutOfCoreReport report = transpose_out_of_core(in, out, o, MPI_COMM_WORLD);
  EXPECT_TRUE(test::exists(out.file));
  EXPECT_EQ(test::leftovers_of(out.file), std::vector<std::string>{});

  const int rank = test::rank_of(), size = test::size_of();
  const BlockDistribution din(shape, size), dout = din.transposed();
  std::vector<T> got(static_cast<std::size_t>(dout.local_size(rank)));
  {
    io::H5File f = io::H5File::open_read(out.file, MPI_COMM_WORLD);
    const io::DatasetInfo info = inspect_dataset(f, out.path);
    EXPECT_EQ(info.shape, shape.transposed());
    EXPECT_EQ(info.dtype, dtype_of<T>);
    if (shape.empty())
      return report; // nothing to compare (and HDF5 1.10 fails reading no elements)
    read_rows(f, out.path, dout, rank, dtype_of<T>, got.data());
  }

  // The in-memory path on the same data.
  const auto mine = test::random_block<T>(seed, din.begin(rank), din.rows(rank), 0, shape.cols);
  std::vector<T> planned(got.size());
  TransposePlan plan(din, dtype_of<T>, MPI_COMM_WORLD, Backend::Cpu,
                     {.algorithm = Exchange::Alltoallv});
  plan.execute(mine.data(), planned.data());
  // memcmp must not see the null data() of an empty block (a rank without rows).
  EXPECT_TRUE(got.empty() || std::memcmp(got.data(), planned.data(), got.size() * sizeof(T)) == 0)
      << "rank " << rank << ": the out-of-core result differs from TransposePlan's";

  // The reference on the whole matrix, this rank's rows of it.
  const auto all = test::random_block<T>(seed, 0, shape.rows, 0, shape.cols);
  std::vector<T> ref(static_cast<std::size_t>(shape.size()));
  reference::transpose(all.data(), ref.data(), shape.rows, shape.cols);
  EXPECT_TRUE(got.empty() || std::memcmp(got.data(), ref.data() + dout.begin(rank) * shape.rows,
                                         got.size() * sizeof(T)) == 0)
      << "rank " << rank << ": the out-of-core result differs from the reference";
  return report;
}

using Case = std::tuple<DType, Shape, int, ChunkShape>;
class OutOfCoreTranspose : public testing::TestWithParam<Case> {};

// Chunks of about a seventh of the rows or columns: several chunks even for small matrices.
TEST_P(OutOfCoreTranspose, MatchesTheInMemoryResultBitForBit) {
  const auto& [dtype, shape, depth, chunks] = GetParam();
  OutOfCoreOptions o;
  o.staging_depth = depth;
  o.chunk_shape = chunks;
  o.chunk_rows = std::max<std::int64_t>(1, shape.rows / 7);
  o.chunk_cols = std::max<std::int64_t>(1, shape.cols / 7);
  o.backend = Backend::Cpu;
  o.exchange = depth == 1 ? Exchange::Alltoallv : Exchange::Pipelined;
  dispatch_dtype(dtype, [&](auto tag) {
    const auto r = check_transpose<decltype(tag)>(shape, o);
    if (chunks == ChunkShape::RowSlabs) {
      EXPECT_EQ(r.chunks, (shape.rows + o.chunk_rows - 1) / o.chunk_rows);
      EXPECT_EQ(r.chunk_cols, shape.cols);
    } else {
      EXPECT_EQ(r.chunks, (shape.cols + o.chunk_cols - 1) / o.chunk_cols);
      EXPECT_EQ(r.chunk_rows, shape.rows);
    }
    EXPECT_EQ(r.chunk_shape, chunks);
  });
}

const Shape shapes[] = {{1, 1}, {1, 37}, {41, 1}, {2, 5}, {17, 31}, {97, 89}, {256, 64}};

std::string case_name(const testing::TestParamInfo<Case>& info) {
  const auto& [dtype, shape, depth, chunks] = info.param;
  return std::string(dtype_name(dtype)) + "_" + std::to_string(shape.rows) + "x" +
         std::to_string(shape.cols) + "_depth" + std::to_string(depth) + "_" +
         chunk_shape_name(chunks);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, OutOfCoreTranspose,
    testing::Combine(testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                     testing::ValuesIn(shapes), testing::Values(1),
                     testing::Values(ChunkShape::ColumnPanels, ChunkShape::RowSlabs)),
    case_name);

// A deeper staging queue changes the order reads, exchanges and writes overlap in, not what
// is moved: one element type is enough for it.
INSTANTIATE_TEST_SUITE_P(
    Deeper, OutOfCoreTranspose,
    testing::Combine(testing::Values(DType::c64), testing::ValuesIn(shapes), testing::Values(3),
                     testing::Values(ChunkShape::ColumnPanels, ChunkShape::RowSlabs)),
    case_name);

// The chunk size follows from a memory limit a sixteenth of the dataset, and the buffers stay
// within it, for both chunk shapes.
TEST(OutOfCoreTransposeLimits, ChunksFollowTheMemoryLimit) {
  const Shape shape{1000, 999};
  const std::size_t bytes = static_cast<std::size_t>(shape.size()) * sizeof(double);
  for (ChunkShape chunks : {ChunkShape::ColumnPanels, ChunkShape::RowSlabs}) {
    OutOfCoreOptions o;
    o.memory_limit = bytes / 16;
    o.chunk_shape = chunks;
    const auto r = check_transpose<double>(shape, o);
    EXPECT_GT(r.chunks, 1);
    EXPECT_LE(r.buffer_bytes, o.memory_limit);
    EXPECT_GT(r.buffer_bytes, o.memory_limit / 2) << "the chunks could have been larger";
  }
}

// A chunk size in bytes gives whole columns (rows) per chunk.
TEST(OutOfCoreTransposeLimits, ChunkSizeSetsWholeLinesPerChunk) {
  const Shape shape{300, 200}; // a column is 2400 bytes, a row 1600
  for (ChunkShape chunks : {ChunkShape::ColumnPanels, ChunkShape::RowSlabs}) {
    const bool panels = chunks == ChunkShape::ColumnPanels;
    OutOfCoreOptions o;
    o.chunk_shape = chunks;
    o.chunk_bytes = 24000; // 10 columns or 15 rows
    const auto r = check_transpose<double>(shape, o);
    EXPECT_EQ(panels ? r.chunk_cols : r.chunk_rows, panels ? 10 : 15);
    EXPECT_EQ(r.chunks, 20);
    o.chunk_bytes = 1; // less than one line: one per chunk
    EXPECT_EQ(check_transpose<float>({7, 5}, o).chunks, panels ? 5 : 7);
  }
}

// One row of 10 x 4000 (or one column of 4000 x 10) is 32000 bytes.
TEST(OutOfCoreTransposeLimits, TooSmallALimitIsAResourceErrorOnEveryRank) {
  for (ChunkShape chunks : {ChunkShape::ColumnPanels, ChunkShape::RowSlabs}) {
    const bool panels = chunks == ChunkShape::ColumnPanels;
    const Shape shape = panels ? Shape{4000, 10} : Shape{10, 4000};
    TempDir dir;
    const io::DatasetRef in{dir.file("a.h5"), "/A"}, out{dir.file("at.h5"), "/AT"};
    write_matrix<double>(in, shape, test::shared_seed());
    OutOfCoreOptions o;
    o.memory_limit = 4096;
    o.chunk_shape = chunks;
    o.progress = false;
    test::expect_error<ResourceError>(
        [&] { transpose_out_of_core(in, out, o, MPI_COMM_WORLD); },
        {"memory limit", shape.str(), panels ? "one column" : "one row"});
    EXPECT_FALSE(test::exists(out.file));
    EXPECT_EQ(test::leftovers_of(out.file), std::vector<std::string>{});
  }
}

TEST(OutOfCoreTransposeLimits, RefusesToWriteIntoItsInput) {
  TempDir dir;
  const io::DatasetRef in{dir.file("a.h5"), "/A"}, out{dir.file("a.h5"), "/AT"};
  write_matrix<float>(in, {3, 4}, test::shared_seed());
  OutOfCoreOptions o;
  o.progress = false;
  test::expect_error<InputError>([&] { transpose_out_of_core(in, out, o, MPI_COMM_WORLD); },
                                 {"must not be the input"});
  EXPECT_TRUE(test::exists(in.file));
}

TEST(OutOfCoreTransposeModes, SerialHdf5TakesTurnsWithTheSameResult) {
  for (ChunkShape chunks : {ChunkShape::ColumnPanels, ChunkShape::RowSlabs}) {
    OutOfCoreOptions o;
    o.chunk_shape = chunks;
    o.chunk_rows = 5;
    o.chunk_cols = 4;
    o.staging_depth = 2;
    check_transpose<std::complex<double>>({23, 19}, o, "serial");
  }
}

TEST(OutOfCoreTransposeModes, EmptyMatricesGiveEmptyOutputs) {
  OutOfCoreOptions o;
  o.memory_limit = 1 << 20;
  const auto r0 = check_transpose<double>({0, 7}, o);
  EXPECT_EQ(r0.chunks, 0);
  const auto r1 = check_transpose<float>({5, 0}, o);
  EXPECT_EQ(r1.chunks, 0);
}

} // namespace
} // namespace tessera::ops
