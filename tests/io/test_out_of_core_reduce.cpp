// Out-of-core reductions against the in-memory ReducePlan and the serial reference, bit for
// bit: every op on every axis, f32 and f64, chunks that cut the 64-row blocks (All, Rows) or
// hold several of them (Cols), staging depths 1 and 3, and chunks from a memory limit far
// below the dataset size. Norms rescued near overflow and underflow (the Norm2 rescue's extra
// passes) against the plan bit for bit and against accurate norms.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "../norm2_test_support.hpp"
#include "core/block_distribution.hpp"
#include "core/dtype.hpp"
#include "cpu/reference.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"
#include "mpi/reduce_plan.hpp"
#include "ops/out_of_core.hpp"

namespace tessera::ops {
namespace {

using test::TempDir;

const std::vector<Op> all_ops = {Op::Sum,   Op::Min,   Op::Max,    Op::Mean,
                                 Op::Norm1, Op::Norm2, Op::NormInf};

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

template <class T>
void write_matrix(const io::DatasetRef& ref, Shape shape, std::uint64_t seed, bool with_nan) {
  const int rank = test::rank_of();
  const BlockDistribution dist(shape, test::size_of());
  auto mine = test::random_block<T>(seed, dist.begin(rank), dist.rows(rank), 0, shape.cols);
  if (with_nan && dist.rows(rank) > 0 && shape.cols > 0 && rank == test::size_of() - 1)
    mine.back() = std::numeric_limits<T>::quiet_NaN();
  io::H5File f = io::H5File::create(ref.file, MPI_COMM_WORLD);
  write_rows(f, ref.path, dist, rank, dtype_of<T>, mine.data());
  f.commit();
}

// Out of core against ReducePlan and the reference, bit for bit; the first mismatch is enough.
void compare(Op op, const std::vector<double>& got, const std::vector<double>& planned,
             const std::vector<double>& expected) {
  ASSERT_EQ(got.size(), expected.size()) << op_name(op);
  ASSERT_EQ(planned.size(), expected.size()) << op_name(op);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ASSERT_TRUE(same_bits(got[i], planned[i]))
        << op_name(op) << "[" << i << "]: out of core " << got[i] << ", ReducePlan " << planned[i]
        << " (rank " << test::rank_of() << ")";
    ASSERT_TRUE(same_bits(got[i], expected[i]))
        << op_name(op) << "[" << i << "]: out of core " << got[i] << ", reference " << expected[i]
        << " (rank " << test::rank_of() << ")";
  }
}

template <class T>
OutOfCoreReport check_reduce(Shape shape, Axis axis, OutOfCoreOptions o, bool with_nan = false) {
  TempDir dir;
  const std::uint64_t seed = test::shared_seed();
  SCOPED_TRACE(testing::Message() << "dtype " << dtype_name(dtype_of<T>) << ", shape "
                                  << shape.str() << ", axis " << axis_name(axis) << ", depth "
                                  << o.staging_depth << ", chunk_rows " << o.chunk_rows
                                  << ", memory_limit " << o.memory_limit << ", seed " << seed);
  const io::DatasetRef in{dir.file("a.h5"), "/A"};
  write_matrix<T>(in, shape, seed, with_nan);

  o.progress = false;
  OutOfCoreReport report;
  const ReduceResult got = reduce_out_of_core(in, all_ops, axis, o, MPI_COMM_WORLD, &report);

  // The in-memory plan on the same data.
  const int rank = test::rank_of(), size = test::size_of();
  const BlockDistribution dist(shape, size);
  std::vector<T> mine(static_cast<std::size_t>(dist.local_size(rank)));
  {
    io::H5File f = io::H5File::open_read(in.file, MPI_COMM_WORLD);
    read_rows(f, in.path, dist, rank, dtype_of<T>, mine.data());
  }
  ReducePlan plan(dist, dtype_of<T>, MPI_COMM_WORLD, Backend::Cpu, all_ops, axis);
  const ReduceResult planned = plan.execute(mine.data());

  // The reference on the whole matrix (as written, NaN included).
  std::vector<T> all(static_cast<std::size_t>(shape.size()));
  {
    io::H5File f = io::H5File::open_read(in.file, MPI_COMM_WORLD);
    io::read_block(f, in.path, {0, shape.rows, 0, shape.cols}, dtype_of<T>, all.data());
  }

  EXPECT_EQ(got.axis, axis);
  EXPECT_EQ(got.ops, all_ops);
  for (std::size_t k = 0; k < all_ops.size(); ++k)
    compare(all_ops[k], got.values[k], planned.values[k],
            reference::reduce(all_ops[k], axis, all.data(), shape.rows, shape.cols));
  return report;
}

using Case = std::tuple<DType, Axis, Shape, std::int64_t, int>;
class OutOfCoreReduce : public testing::TestWithParam<Case> {};

TEST_P(OutOfCoreReduce, MatchesReducePlanBitForBit) {
  const auto& [dtype, axis, shape, chunk_rows, depth] = GetParam();
  OutOfCoreOptions o;
  o.staging_depth = depth;
  // Chunks of 7 or 100 rows cut the 64-row blocks of the canonical order.
  o.chunk_rows = chunk_rows;
  dispatch_real_dtype(dtype, [&](auto tag) {
    const auto r = check_reduce<decltype(tag)>(shape, axis, o);
    if (shape.rows > 0 && shape.cols > 0) {
      EXPECT_EQ(r.chunks, (shape.rows + o.chunk_rows - 1) / o.chunk_rows);
    }
  });
}

const Shape shapes[] = {{1, 1}, {2, 5}, {17, 31}, {129, 65}, {300, 17}};

std::string case_name(const testing::TestParamInfo<Case>& p) {
  const auto& [dtype, axis, shape, chunk_rows, depth] = p.param;
  return std::string(dtype_name(dtype)) + "_" + std::string(axis_name(axis)) + "_" +
         std::to_string(shape.rows) + "x" + std::to_string(shape.cols) + "_chunk" +
         std::to_string(chunk_rows) + "_depth" + std::to_string(depth);
}

INSTANTIATE_TEST_SUITE_P(Shapes, OutOfCoreReduce,
                         testing::Combine(testing::Values(DType::f32, DType::f64),
                                          testing::Values(Axis::All, Axis::Rows, Axis::Cols),
                                          testing::ValuesIn(shapes), testing::Values(7, 100),
                                          testing::Values(1)),
                         case_name);

// A larger matrix in chunks of 100 and 333 rows: the many-chunk case is 300 x 17 above (43
// chunks of 7 rows), each chunk a collective read.
INSTANTIATE_TEST_SUITE_P(Larger, OutOfCoreReduce,
                         testing::Combine(testing::Values(DType::f32, DType::f64),
                                          testing::Values(Axis::All, Axis::Rows, Axis::Cols),
                                          testing::Values(Shape{1000, 130}),
                                          testing::Values(100, 333), testing::Values(1)),
                         case_name);

// Super-blocks of row blocks (16384 rows) cut by chunks of 5000 rows, the last one partial.
INSTANTIATE_TEST_SUITE_P(Tall, OutOfCoreReduce,
                         testing::Combine(testing::Values(DType::f32, DType::f64),
                                          testing::Values(Axis::All, Axis::Rows, Axis::Cols),
                                          testing::Values(Shape{33001, 3}), testing::Values(5000),
                                          testing::Values(1)),
                         case_name);

INSTANTIATE_TEST_SUITE_P(Deeper, OutOfCoreReduce,
                         testing::Combine(testing::Values(DType::f64),
                                          testing::Values(Axis::All, Axis::Rows, Axis::Cols),
                                          testing::Values(Shape{300, 17}), testing::Values(64),
                                          testing::Values(3)),
                         case_name);

TEST(OutOfCoreReduceLimits, ChunksFollowTheMemoryLimit) {
  const Shape shape{2000, 300};
  const std::size_t bytes = static_cast<std::size_t>(shape.size()) * sizeof(double);
  for (Axis axis : {Axis::All, Axis::Rows, Axis::Cols}) {
    OutOfCoreOptions o;
    o.memory_limit = bytes / 16;
    const auto r = check_reduce<double>(shape, axis, o);
    EXPECT_GT(r.chunks, 4) << axis_name(axis);
    EXPECT_LE(r.buffer_bytes, o.memory_limit) << axis_name(axis);
  }
}

// A chunk size in bytes gives whole rows per chunk (whole 64-row blocks for column folds).
TEST(OutOfCoreReduceLimits, ChunkSizeSetsRowsPerChunk) {
  const Shape shape{1000, 50}; // 400 bytes per row
  for (Axis axis : {Axis::All, Axis::Rows, Axis::Cols}) {
    OutOfCoreOptions o;
    o.chunk_bytes = 400 * 100 + 399; // 100 rows and a bit
    const auto r = check_reduce<double>(shape, axis, o);
    const std::int64_t rows = axis == Axis::Cols ? 64 : 100;
    EXPECT_EQ(r.chunk_rows, rows) << axis_name(axis);
    EXPECT_EQ(r.chunks, (shape.rows + rows - 1) / rows) << axis_name(axis);
  }
  OutOfCoreOptions tiny;
  tiny.chunk_bytes = 1; // less than a row: one row per chunk
  EXPECT_EQ(check_reduce<double>({9, 50}, Axis::All, tiny).chunks, 9);
}

TEST(OutOfCoreReduceLimits, NaNPropagatesAsInMemory) {
  OutOfCoreOptions o;
  o.chunk_rows = 64;
  for (Axis axis : {Axis::All, Axis::Rows, Axis::Cols})
    check_reduce<double>({200, 33}, axis, o, /*with_nan=*/true);
}

// The Norm2 rescue out of core: the same bits as ReducePlan and the reference on matrices whose
// sums of squares overflow or underflow, along every axis, with chunks that cut the 64-row
// blocks or follow a small memory limit, with NormInf alongside (reused) or not (one more pass).
TEST(OutOfCoreReduceNorm2, RescuedNormsMatchReducePlanBitForBit) {
  const Shape shape{130, 67};
  const int rank = test::rank_of(), size = test::size_of();
  // Oversubscribed runs (3 and 4 ranks on small machines) take the two cases that put the
  // extremes in different rank blocks; 1 and 2 ranks take all four.
  std::vector<std::string> names = {"huge and tiny mixed", "a huge row among normal rows",
                                    "a tiny column and a huge column among normal ones",
                                    "zeros and one tiny element"};
  if (size > 2)
    names = {"huge and tiny mixed", "a huge row among normal rows"};
  const BlockDistribution dist(shape, size);
  for (const auto& c : test::extreme_cases()) {
    if (std::find(names.begin(), names.end(), c.name) == names.end())
      continue;
    SCOPED_TRACE(c.name);
    const std::vector<double> a = test::extreme_matrix(c, shape.rows, shape.cols);
    const std::vector<double> mine(a.begin() + dist.begin(rank) * shape.cols,
                                   a.begin() + dist.end(rank) * shape.cols);
    TempDir dir;
    const io::DatasetRef in{dir.file("a.h5"), "/A"};
    {
      io::H5File f = io::H5File::create(in.file, MPI_COMM_WORLD);
      write_rows(f, in.path, dist, rank, DType::f64, mine.data());
      f.commit();
    }
    struct Run {
      std::vector<Op> ops;
      std::int64_t chunk_rows;
      std::size_t memory_limit;
    };
    const Run runs[] = {{all_ops, 7, 0},
                        {{Op::Norm2}, 64, 0},
                        {{Op::Sum, Op::Norm2, Op::Mean}, 0, 20000}}; // chunks of a few rows
    for (Axis axis : {Axis::All, Axis::Rows, Axis::Cols})
      for (const Run& run : runs) {
        SCOPED_TRACE(testing::Message()
                     << axis_name(axis) << ", " << run.ops.size() << " ops, chunk_rows "
                     << run.chunk_rows << ", memory_limit " << run.memory_limit);
        OutOfCoreOptions o;
        o.progress = false;
        o.chunk_rows = run.chunk_rows;
        o.memory_limit = run.memory_limit;
        const ReduceResult got = reduce_out_of_core(in, run.ops, axis, o, MPI_COMM_WORLD);
        ReducePlan plan(dist, DType::f64, MPI_COMM_WORLD, Backend::Cpu, run.ops, axis);
        const ReduceResult planned = plan.execute(mine.data());
        ASSERT_EQ(got.values.size(), run.ops.size());
        for (std::size_t k = 0; k < run.ops.size(); ++k)
          compare(run.ops[k], got.values[k], planned.values[k],
                  reference::reduce(run.ops[k], axis, a.data(), shape.rows, shape.cols));
        const auto want = test::accurate_norms(axis, a.data(), shape.rows, shape.cols);
        const auto& norms = got[Op::Norm2];
        for (std::size_t k = 0; k < want.size(); ++k)
          ASSERT_TRUE(test::close_norm(norms[k], want[k],
                                       test::vector_length(axis, shape.rows, shape.cols)))
              << "norm2 " << k << " is " << norms[k] << ", accurately " << want[k];
      }
  }
}

TEST(OutOfCoreReduceLimits, ComplexDataIsAnInputError) {
  TempDir dir;
  const io::DatasetRef in{dir.file("c.h5"), "/C"};
  {
    const int rank = test::rank_of();
    const BlockDistribution dist({4, 4}, test::size_of());
    std::vector<std::complex<float>> mine(static_cast<std::size_t>(dist.local_size(rank)));
    io::H5File f = io::H5File::create(in.file, MPI_COMM_WORLD);
    write_rows(f, in.path, dist, rank, DType::c64, mine.data());
    f.commit();
  }
  OutOfCoreOptions o;
  o.progress = false;
  test::expect_error<InputError>(
      [&] { reduce_out_of_core(in, {Op::Sum}, Axis::All, o, MPI_COMM_WORLD); }, {"c64"});
}

TEST(OutOfCoreReduceLimits, AMissingDatasetIsAnInputErrorOnEveryRank) {
  TempDir dir;
  const io::DatasetRef in{dir.file("a.h5"), "/A"};
  write_matrix<double>(in, {8, 8}, test::shared_seed(), false);
  OutOfCoreOptions o;
  o.progress = false;
  test::expect_error<InputError>(
      [&] {
        reduce_out_of_core({in.file, "/nope"}, {Op::Max}, Axis::All, o, MPI_COMM_WORLD);
      },
      {"/nope"});
}

} // namespace
} // namespace tessera::ops
