// ReducePlan over a layout on the CUDA backend: the row block the plan redistributes to, reduced
// by the GPU from host memory, gives the same bits as the CPU row-block plan (block-cyclic,
// 2-D and column blocks, every axis, f32 and f64); row-major row blocks also take a device
// pointer; a layout that needs redistributing refuses device memory on every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cuda/buffer.hpp"
#include "cuda_test_util.hpp"
#include "mpi/reduce_plan.hpp"

namespace tessera {
namespace {

using test::shared_seed;
using test::world_size;

// This rank's local block of the row-major global matrix `a` in layout l.
template <class T>
std::vector<T> local_block(const Layout& l, const std::vector<T>& a) {
  const int rank = test::world_rank();
  std::vector<T> b(static_cast<std::size_t>(std::max<std::int64_t>(1, l.local_extent(rank))));
  const Shape g = l.global();
  for (std::int64_t i = 0; i < g.rows; ++i)
    for (std::int64_t j = 0; j < g.cols; ++j)
      if (const auto x = l.local_index(i, j); x.rank == rank)
        b[static_cast<std::size_t>(l.local_offset(rank, x.row, x.col))] =
            a[static_cast<std::size_t>(i * g.cols + j)];
  return b;
}

const std::vector<Op> kOps = {Op::Sum, Op::Mean, Op::Norm2, Op::Min, Op::Max};

template <class T>
void check(const Layout& l, const std::string& what) {
  const int rank = test::world_rank(), p = world_size();
  const Shape g = l.global();
  const std::uint64_t seed = shared_seed();
  const auto a = test::random_vector<T>(static_cast<std::size_t>(g.size()), seed);
  const BlockDistribution dist(g, p);
  const auto block = local_block(l, a);
  for (Axis axis : {Axis::All, Axis::Rows, Axis::Cols}) {
    SCOPED_TRACE(what + " " + g.str() + " " + std::string(dtype_name(dtype_of<T>)) + " " +
                 std::string(axis_name(axis)) + " seed " + std::to_string(seed));
    ReducePlan cpu(dist, dtype_of<T>, MPI_COMM_WORLD, Backend::Cpu, kOps, axis);
    ReducePlan gpu(l, dtype_of<T>, MPI_COMM_WORLD, Backend::Cuda, kOps, axis);
    const ReduceResult want = cpu.execute(a.data() + dist.begin(rank) * g.cols);
    const ReduceResult got = gpu.execute(block.data());
    for (Op op : kOps)
      ASSERT_EQ(test::first_difference(got[op], want[op]), -1) << op_name(op);
  }
}

template <class T>
class CudaReduceLayout : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaReduceLayout, RealTypes);

TYPED_TEST(CudaReduceLayout, SameBitsAsTheCpuRowBlockPlan) {
  TESSERA_REQUIRE_GPU();
  const int p = world_size();
  for (Shape s : {Shape{1, 1}, Shape{67, 45}, Shape{300, 129}}) {
    BlockCyclicSpec spec;
    spec.global = s;
    spec.mb = 3;
    spec.nb = 64;
    spec.pc = p;
    check<TypeParam>(Layout::block_cyclic(spec), "block-cyclic 3 x 64");
    check<TypeParam>(Layout::blocks_2d(s, p, 1, GridOrder::RowMajor, StorageOrder::ColMajor),
                     "2-D blocks col-major");
    check<TypeParam>(Layout::col_blocks(s, p), "column blocks");
    check<TypeParam>(Layout::row_blocks(s, p), "row blocks");
  }
}

TEST(CudaReduceLayout, DeviceMemoryForRowBlocksOnly) {
  TESSERA_REQUIRE_GPU();
  const int rank = test::world_rank(), p = world_size();
  const Shape s{130, 70};
  const auto a = test::random_vector<double>(static_cast<std::size_t>(s.size()), shared_seed());
  const BlockDistribution dist(s, p);
  ReducePlan cpu(dist, DType::f64, MPI_COMM_WORLD, Backend::Cpu, kOps, Axis::Cols);
  ReducePlan gpu(Layout::row_blocks(s, p), DType::f64, MPI_COMM_WORLD, Backend::Cuda, kOps,
                 Axis::Cols, {.memory = Memory::Device});
  const std::size_t n = static_cast<std::size_t>(dist.local_size(rank));
  cuda::DeviceBuffer dev(n * sizeof(double) + 16);
  cuda::copy(dev.data(), a.data() + dist.begin(rank) * s.cols, n * sizeof(double));
  const ReduceResult want = cpu.execute(a.data() + dist.begin(rank) * s.cols);
  const ReduceResult got = gpu.execute(dev.data());
  for (Op op : kOps)
    ASSERT_EQ(test::first_difference(got[op], want[op]), -1) << op_name(op);
  EXPECT_THROW(ReducePlan(Layout::col_blocks(s, p), DType::f64, MPI_COMM_WORLD, Backend::Cuda, kOps,
                          Axis::All, {.memory = Memory::Device}),
               InputError);
}

} // namespace
} // namespace tessera
