// Out-of-core transpose and reductions with the CUDA backend: each chunk goes from its host
// buffer through the GPU and back. The results must be bit-identical to the CPU backend's on the
// same file, with a memory limit far below the dataset size (many chunks, a short last one),
// norms rescued near overflow and underflow included.
#include <gtest/gtest.h>
#include <mpi.h>

#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "../io/io_test_support.hpp"
#include "../norm2_test_support.hpp"
#include "core/block_distribution.hpp"
#include "core/dtype.hpp"
#include "cuda_test_util.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "ops/out_of_core.hpp"

namespace tessera::ops {
namespace {

template <class T>
void write_matrix(const io::DatasetRef& ref, Shape shape, std::uint64_t seed) {
  const int rank = test::rank_of();
  const BlockDistribution dist(shape, test::size_of());
  auto mine = test::random_block<T>(seed, dist.begin(rank), dist.rows(rank), 0, shape.cols);
  io::H5File f = io::H5File::create(ref.file, MPI_COMM_WORLD);
  write_rows(f, ref.path, dist, rank, dtype_of<T>, mine.data());
  f.commit();
}

template <class T>
std::vector<T> read_block(const io::DatasetRef& ref, Shape shape) {
  const int rank = test::rank_of();
  const BlockDistribution dist(shape, test::size_of());
  std::vector<T> v(static_cast<std::size_t>(dist.rows(rank) * shape.cols));
  io::H5File f = io::H5File::open_read(ref.file, MPI_COMM_WORLD);
  read_rows(f, ref.path, dist, rank, dtype_of<T>, v.data());
  return v;
}

OutOfCoreOptions small_chunks(Backend backend) {
  OutOfCoreOptions o;
  o.backend = backend;
  o.memory_limit = std::size_t{1} << 20; // far below the datasets below
  o.progress = false;
  return o;
}

// Both chunk shapes: the GPU transposes panels of whole columns (the default) and slabs of
// whole rows bit for bit as the CPU does.
template <class T>
void check_transpose(Shape shape) {
  test::TempDir dir;
  const std::uint64_t seed = test::shared_seed();
  const io::DatasetRef in{dir.file("a.h5"), "/A"};
  write_matrix<T>(in, shape, seed);
  for (ChunkShape chunks : {ChunkShape::ColumnPanels, ChunkShape::RowSlabs}) {
    SCOPED_TRACE(testing::Message() << dtype_name(dtype_of<T>) << " " << shape.str() << " seed "
                                    << seed << ", chunks of " << chunk_shape_name(chunks));
    const io::DatasetRef cpu{dir.file("cpu.h5"), "/AT"}, gpu{dir.file("gpu.h5"), "/AT"};
    OutOfCoreOptions oc = small_chunks(Backend::Cpu), og = small_chunks(Backend::Cuda);
    oc.chunk_shape = og.chunk_shape = chunks;
    const OutOfCoreReport rc = transpose_out_of_core(in, cpu, oc, MPI_COMM_WORLD);
    const OutOfCoreReport rg = transpose_out_of_core(in, gpu, og, MPI_COMM_WORLD);
    EXPECT_EQ(rc.backend, Backend::Cpu);
    EXPECT_EQ(rg.backend, Backend::Cuda);
    EXPECT_EQ(rg.chunk_shape, chunks);
    EXPECT_GT(rg.chunks, 1);
    const auto want = read_block<T>(cpu, shape.transposed());
    const auto got = read_block<T>(gpu, shape.transposed());
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(got.empty() || std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0)
        << "rank " << test::rank_of();
  }
}

template <class T>
void check_reduce(Shape shape, Axis axis) {
  test::TempDir dir;
  const std::uint64_t seed = test::shared_seed();
  SCOPED_TRACE(testing::Message() << dtype_name(dtype_of<T>) << " " << shape.str() << " "
                                  << axis_name(axis) << " seed " << seed);
  const io::DatasetRef in{dir.file("a.h5"), "/A"};
  write_matrix<T>(in, shape, seed);
  const std::vector<Op> ops = {Op::Sum,   Op::Min,   Op::Max,    Op::Mean,
                               Op::Norm1, Op::Norm2, Op::NormInf};
  OutOfCoreReport rc, rg;
  const ReduceResult want =
      reduce_out_of_core(in, ops, axis, small_chunks(Backend::Cpu), MPI_COMM_WORLD, &rc);
  const ReduceResult got =
      reduce_out_of_core(in, ops, axis, small_chunks(Backend::Cuda), MPI_COMM_WORLD, &rg);
  EXPECT_EQ(rc.backend, Backend::Cpu);
  EXPECT_EQ(rg.backend, Backend::Cuda);
  EXPECT_GT(rg.chunks, 1);
  ASSERT_EQ(got.values.size(), want.values.size());
  for (std::size_t k = 0; k < ops.size(); ++k) {
    ASSERT_EQ(got.values[k].size(), want.values[k].size()) << op_name(ops[k]);
    for (std::size_t i = 0; i < want.values[k].size(); ++i)
      ASSERT_EQ(std::memcmp(&got.values[k][i], &want.values[k][i], sizeof(double)), 0)
          << op_name(ops[k]) << "[" << i << "]: cuda " << got.values[k][i] << ", cpu "
          << want.values[k][i];
  }
}

// The Norm2 rescue out of core: its passes give the CUDA backend's run the CPU backend's bits.
TEST(CudaOutOfCore, RescuedNormsMatchCpuBackend) {
  TESSERA_REQUIRE_GPU();
  const Shape shape{777, 513};
  const int rank = test::rank_of();
  const BlockDistribution dist(shape, test::size_of());
  for (const auto& c : test::extreme_cases()) {
    if (c.name != "huge and tiny mixed" &&
        c.name != "a tiny column and a huge column among normal ones")
      continue;
    test::TempDir dir;
    const io::DatasetRef in{dir.file("a.h5"), "/A"};
    const auto a = test::extreme_matrix(c, shape.rows, shape.cols);
    {
      io::H5File f = io::H5File::create(in.file, MPI_COMM_WORLD);
      write_rows(f, in.path, dist, rank, DType::f64, a.data() + dist.begin(rank) * shape.cols);
      f.commit();
    }
    for (Axis axis : {Axis::All, Axis::Rows, Axis::Cols})
      for (const std::vector<Op>& ops :
           {std::vector<Op>{Op::Norm2, Op::Sum}, std::vector<Op>{Op::Norm2, Op::NormInf}}) {
        SCOPED_TRACE(testing::Message()
                     << c.name << ", " << axis_name(axis) << ", " << ops.size() << " ops");
        const ReduceResult want =
            reduce_out_of_core(in, ops, axis, small_chunks(Backend::Cpu), MPI_COMM_WORLD);
        const ReduceResult got =
            reduce_out_of_core(in, ops, axis, small_chunks(Backend::Cuda), MPI_COMM_WORLD);
        for (Op op : ops) {
          const std::int64_t at = test::first_difference(got[op], want[op]);
          ASSERT_EQ(at, -1) << op_name(op) << ": cuda " << got[op][at] << ", cpu " << want[op][at];
        }
        const auto accurate = test::accurate_norms(axis, a.data(), shape.rows, shape.cols);
        for (std::size_t k = 0; k < accurate.size(); ++k)
          ASSERT_TRUE(test::close_norm(got[Op::Norm2][k], accurate[k],
                                       test::vector_length(axis, shape.rows, shape.cols)))
              << "norm2 " << k << " is " << got[Op::Norm2][k] << ", accurately " << accurate[k];
      }
  }
}

TEST(CudaOutOfCore, TransposeMatchesCpuBackend) {
  TESSERA_REQUIRE_GPU();
  check_transpose<float>({1000, 999});
  check_transpose<double>({777, 513});
  check_transpose<std::complex<float>>({301, 257});
  check_transpose<std::complex<double>>({129, 333});
}

TEST(CudaOutOfCore, ReductionsMatchCpuBackend) {
  TESSERA_REQUIRE_GPU();
  for (Axis axis : {Axis::All, Axis::Rows, Axis::Cols}) {
    check_reduce<float>({1000, 999}, axis);
    check_reduce<double>({777, 513}, axis);
  }
}

} // namespace
} // namespace tessera::ops
