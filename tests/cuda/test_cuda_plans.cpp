// TransposePlan and ReducePlan on the CUDA backend, with device- and host-resident blocks and
// every exchange algorithm, against the serial reference (bit for bit). Ranks share a GPU when
// there are more ranks than GPUs.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>

#include "cpu/reference.hpp"
#include "cuda/buffer.hpp"
#include "cuda_test_util.hpp"
#include "mpi/reduce_plan.hpp"
#include "mpi/transpose_plan.hpp"

namespace tessera {
namespace {

struct Shape2 {
  std::int64_t rows, cols;
};

std::uint64_t shared_seed() {
  std::uint64_t seed = test::fresh_seed();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

// With `column_major`, this rank's blocks are stored by columns: its rows of A as N × m_r, its
// rows of Aᵀ expected as M × n_r.
template <class T>
void check_transpose_plan(Shape2 s, Memory memory, Exchange algo, bool column_major = false) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE(::testing::Message()
               << s.rows << "x" << s.cols << " " << dtype_name(dtype_of<T>)
               << (memory == Memory::Device ? " device" : " host") << " " << exchange_name(algo)
               << (column_major ? " column-major" : "") << " seed " << seed);
  const auto a = test::random_vector<T>(static_cast<std::size_t>(s.rows * s.cols), seed);
  std::vector<T> at(a.size());
  reference::transpose(a.data(), at.data(), s.rows, s.cols);
  const BlockDistribution dist({s.rows, s.cols}, size);
  const BlockDistribution tdist = dist.transposed();
  const auto n_in = static_cast<std::size_t>(dist.local_size(rank));
  const auto n_out = static_cast<std::size_t>(tdist.local_size(rank));
  std::vector<T> in(a.begin() + dist.begin(rank) * s.cols,
                    a.begin() + dist.begin(rank) * s.cols + static_cast<std::ptrdiff_t>(n_in));
  std::vector<T> expect(at.begin() + tdist.begin(rank) * s.rows,
                        at.begin() + tdist.begin(rank) * s.rows +
                            static_cast<std::ptrdiff_t>(n_out));
  if (column_major) {
    std::vector<T> by_columns(n_in), expect_by_columns(n_out);
    reference::transpose(in.data(), by_columns.data(), dist.rows(rank), s.cols);
    reference::transpose(expect.data(), expect_by_columns.data(), tdist.rows(rank), s.rows);
    in.swap(by_columns);
    expect.swap(expect_by_columns);
  }
  std::vector<T> out(n_out);

  TransposeOptions opt;
  opt.algorithm = algo;
  opt.memory = memory;
  opt.column_major = column_major;
  TransposePlan plan(dist, dtype_of<T>, MPI_COMM_WORLD, Backend::Cuda, opt);
  EXPECT_EQ(plan.backend(), Backend::Cuda);
  for (int round = 0; round < 2; ++round) { // a plan runs many times
    std::fill(out.begin(), out.end(), T{});
    if (memory == Memory::Device) {
      cuda::DeviceBuffer din(n_in * sizeof(T) + 16), dout(n_out * sizeof(T) + 16);
      cuda::copy(din.data(), in.data(), n_in * sizeof(T));
      plan.execute(din.as<T>(), dout.as<T>());
      cuda::copy(out.data(), dout.data(), n_out * sizeof(T));
    } else {
      plan.execute(in.data(), out.data());
    }
    ASSERT_EQ(std::memcmp(out.data(), expect.data(), n_out * sizeof(T)), 0) << "round " << round;
  }
}

template <class T>
class CudaTransposePlan : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CudaTransposePlan, Types);

TYPED_TEST(CudaTransposePlan, MatchesReference) {
  TESSERA_REQUIRE_GPU();
  for (Shape2 s : {Shape2{1, 1}, Shape2{1, 100}, Shape2{100, 1}, Shape2{31, 33}, Shape2{17, 31},
                   Shape2{1000, 999}})
    for (Memory m : {Memory::Device, Memory::Host})
      for (Exchange e :
           {Exchange::Alltoallv, Exchange::PairwiseP2P, Exchange::Pipelined, Exchange::Auto})
        check_transpose_plan<TypeParam>(s, m, e);
}

TYPED_TEST(CudaTransposePlan, ColumnMajorBlocksMatchTheReference) {
  TESSERA_REQUIRE_GPU();
  for (Shape2 s : {Shape2{1, 1}, Shape2{1, 100}, Shape2{100, 1}, Shape2{31, 33}, Shape2{1000, 999}})
    for (Memory m : {Memory::Device, Memory::Host})
      for (Exchange e : {Exchange::Alltoallv, Exchange::Pipelined, Exchange::Auto})
        check_transpose_plan<TypeParam>(s, m, e, true);
}

template <class T>
void check_reduce_plan(Shape2 s, Memory memory, Axis axis) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE(::testing::Message() << s.rows << "x" << s.cols << " " << dtype_name(dtype_of<T>)
                                    << (memory == Memory::Device ? " device" : " host") << " "
                                    << axis_name(axis) << " seed " << seed);
  const auto a = test::random_vector<T>(static_cast<std::size_t>(s.rows * s.cols), seed);
  const BlockDistribution dist({s.rows, s.cols}, size);
  const auto n = static_cast<std::size_t>(dist.local_size(rank));
  const T* block = a.data() + dist.begin(rank) * s.cols;
  const std::vector<Op> ops = {Op::Sum,   Op::Min,   Op::Max,    Op::Mean,
                               Op::Norm1, Op::Norm2, Op::NormInf};
  ReduceOptions opt;
  opt.memory = memory;
  ReducePlan plan(dist, dtype_of<T>, MPI_COMM_WORLD, Backend::Cuda, ops, axis, opt);
  cuda::DeviceBuffer dev(n * sizeof(T) + 16);
  cuda::copy(dev.data(), block, n * sizeof(T));
  const ReduceResult r = plan.execute(memory == Memory::Device ? dev.data() : block);
  for (Op op : ops) {
    const auto want = reference::reduce(op, axis, a.data(), s.rows, s.cols);
    const std::int64_t at = test::first_difference(r[op], want);
    ASSERT_EQ(at, -1) << op_name(op) << ": GPU " << r[op][at] << " reference " << want[at];
  }
}

template <class T>
class CudaReducePlan : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaReducePlan, RealTypes);

TYPED_TEST(CudaReducePlan, BitForBitWithTheReference) {
  TESSERA_REQUIRE_GPU();
  for (Shape2 s :
       {Shape2{1, 1}, Shape2{1, 300}, Shape2{31, 33}, Shape2{130, 257}, Shape2{1000, 999}})
    for (Memory m : {Memory::Device, Memory::Host})
      for (Axis axis : {Axis::All, Axis::Rows, Axis::Cols})
        check_reduce_plan<TypeParam>(s, m, axis);
}

// A caller's device input may still be in flight on the legacy default stream (here a large
// asynchronous copy from pinned memory, milliseconds long) when it calls execute: the plans run
// on non-blocking streams of their own, so without waiting for that stream they would read
// the block before it arrived.
TEST(CudaDevicePlans, WaitForInputStillBeingWrittenOnTheDefaultStream) {
  TESSERA_REQUIRE_GPU();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::int64_t rows = 2053 * size, cols = 8209; // about 64 MiB of f32 per rank
  const BlockDistribution dist({rows, cols}, size);
  const BlockDistribution tdist = dist.transposed();
  const auto a = test::random_vector<float>(static_cast<std::size_t>(rows * cols), shared_seed());
  std::vector<float> at(a.size());
  reference::transpose(a.data(), at.data(), rows, cols);
  const auto n = static_cast<std::size_t>(dist.local_size(rank));
  const auto n_out = static_cast<std::size_t>(tdist.local_size(rank));
  const float* block = a.data() + dist.begin(rank) * cols;
  const float* want = at.data() + tdist.begin(rank) * rows;

  cuda::PinnedBuffer pinned(n * sizeof(float));
  std::memcpy(pinned.data(), block, n * sizeof(float));
  const std::vector<float> zeros(n, 0.0f);
  cuda::DeviceBuffer din(n * sizeof(float)), dout(n_out * sizeof(float));
  const auto write_input_on_default_stream = [&] {
    cuda::copy(din.data(), zeros.data(), n * sizeof(float));
    cuda::copy_async(nullptr, din.data(), pinned.data(), n * sizeof(float));
  };

  TransposePlan plan(dist, DType::f32, MPI_COMM_WORLD, Backend::Cuda,
                     {.algorithm = Exchange::Auto, .memory = Memory::Device});
  // Round 0 may be ordered by accident (the first launch of a kernel loads its module, which
  // can synchronise the device); round 1 is not.
  for (int round = 0; round < 2; ++round) {
    write_input_on_default_stream();
    plan.execute(din.data(), dout.data());
    std::vector<float> out(n_out);
    cuda::copy(out.data(), dout.data(), n_out * sizeof(float));
    ASSERT_EQ(std::memcmp(out.data(), want, n_out * sizeof(float)), 0)
        << "transpose round " << round;
  }

  const std::vector<Op> ops = {Op::Sum, Op::Max};
  ReducePlan on_device(dist, DType::f32, MPI_COMM_WORLD, Backend::Cuda, ops, Axis::All,
                       {.memory = Memory::Device});
  for (int round = 0; round < 2; ++round) {
    write_input_on_default_stream();
    const ReduceResult got = on_device.execute(din.data());
    for (Op op : ops) {
      const auto expect = reference::reduce(op, Axis::All, a.data(), rows, cols);
      ASSERT_EQ(test::first_difference(got[op], expect), -1) << op_name(op) << " round " << round;
    }
  }
}

} // namespace
} // namespace tessera
