// RedistributePlan on the CUDA backend with blocks in device memory, against the CPU backend on
// the same data, bit for bit: random layouts (row, column, 2-D blocks, block-cyclic with awkward
// blocks and padded leading dimensions, general grids with idle ranks), 1 × 2 and 2 × 1 grids,
// every op, non-trivial alpha and beta, all four element types, sub-matrices, exchanges forced
// into rounds, ranks that hold nothing. Skips on every rank together without a GPU.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <tessera/error.hpp>
#include <tessera/layout.hpp>
#include <tessera/redistribute_plan.hpp>

#include "../mpi/redistribute_random.hpp"
#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "cuda_test_util.hpp"

namespace {

using tessera::Backend;
using tessera::BlockCyclicSpec;
using tessera::GridOrder;
using tessera::Layout;
using tessera::MatrixOp;
using tessera::Memory;
using tessera::RedistributeOptions;
using tessera::RedistributePlan;
using tessera::Shape;
using tessera::StorageOrder;
using tessera::test::comm_rank;
using tessera::test::comm_size;
using tessera::test::pick;
using tessera::test::random_layout;

// Values spread over 2^-8 … 2^8 (cuda_test_util.hpp): products and sums round, so an operation
// done differently (fused, reordered) shows in the bits.
template <class T>
std::vector<T> random_block(const Layout& l, int rank, std::uint64_t salt) {
  return tessera::test::random_vector<T>(static_cast<std::size_t>(l.local_extent(rank)),
                                         salt * 7919 + static_cast<std::uint64_t>(rank));
}

template <class T>
std::vector<T> to_host(const tessera::cuda::DeviceBuffer& d, std::size_t n) {
  std::vector<T> v(n);
  tessera::cuda::copy(v.data(), d.data(), n * sizeof(T));
  return v;
}

template <class T>
tessera::cuda::DeviceBuffer to_device(const std::vector<T>& v) {
  tessera::cuda::DeviceBuffer d(v.size() * sizeof(T));
  tessera::cuda::copy(d.data(), v.data(), v.size() * sizeof(T));
  return d;
}

// Index of the first element whose bytes differ, or -1 (NaN payloads included: beta = 0 with
// NaN in B must leave the CPU's bits too).
template <class T>
std::int64_t first_byte_difference(const std::vector<T>& a, const std::vector<T>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0)
      return static_cast<std::int64_t>(i);
  return -1;
}

struct Outcome {
  std::int64_t rounds = 1; // the GPU plan's
};

// One case: the CPU plan on host copies, the GPU plan on device copies of the same blocks,
// executed twice (a plan is reused), then the per-execute scalars once more. B starts as NaN
// where beta is 0 (never read).
template <class T>
Outcome check_case(const Layout& a, const Layout& b, RedistributeOptions o, std::uint64_t salt) {
  const int rank = comm_rank();
  RedistributePlan cpu(a, b, tessera::dtype_of<T>, MPI_COMM_WORLD, Backend::Cpu, o);
  RedistributeOptions od = o;
  od.memory = Memory::Device;
  RedistributePlan gpu(a, b, tessera::dtype_of<T>, MPI_COMM_WORLD, Backend::Cuda, od);
  EXPECT_EQ(gpu.backend(), Backend::Cuda);
  EXPECT_EQ(gpu.memory(), Memory::Device);
  EXPECT_EQ(cpu.backend(), Backend::Cpu);
  const auto& tc = cpu.traffic();
  const auto& tg = gpu.traffic();
  EXPECT_EQ(tg.sent, tc.sent);
  EXPECT_EQ(tg.received, tc.received);
  EXPECT_EQ(tg.kept, tc.kept);
  EXPECT_EQ(tg.rounds, tc.rounds);

  const auto a_local = random_block<T>(a, rank, salt);
  auto b_start = random_block<T>(cpu.target(), rank, salt + 1);
  if (o.beta == 0.0)
    for (T& x : b_start)
      x = T(std::numeric_limits<double>::quiet_NaN());
  const auto d_a = to_device(a_local);
  const T* ha = a_local.empty() ? nullptr : a_local.data();
  const void* da = a_local.empty() ? nullptr : d_a.data();

  auto run = [&](auto&& execute_cpu, auto&& execute_gpu, const char* what) {
    auto expected = b_start;
    execute_cpu(ha, expected.empty() ? nullptr : expected.data());
    for (int repeat = 0; repeat < 2; ++repeat) {
      auto d_b = to_device(b_start);
      execute_gpu(da, b_start.empty() ? nullptr : d_b.data());
      const auto got = to_host<T>(d_b, b_start.size());
      // Not ASSERT: every rank goes on to the collectives.
      EXPECT_EQ(first_byte_difference(got, expected), -1)
          << what << ", repeat " << repeat << ", rank " << rank;
    }
  };
  run([&](const T* x, T* y) { cpu.execute(x, y); },
      [&](const void* x, void* y) { gpu.execute(x, y); }, "options' scalars");
  // Other scalars for one execute; beta stays 0 where B holds NaN.
  const std::complex<double> alpha{-1.25, 0.5};
  const std::complex<double> beta =
      o.beta == 0.0 || o.relabel ? 0.0 : std::complex<double>{0.75, -2};
  run([&](const T* x, T* y) { cpu.execute(x, y, alpha, beta); },
      [&](const void* x, void* y) { gpu.execute(x, y, alpha, beta); }, "execute's scalars");
  return {tg.rounds};
}

RedistributeOptions random_options(std::mt19937_64& g, Shape a, Shape b, MatrixOp op) {
  RedistributeOptions o;
  o.op = op;
  const bool t = op != MatrixOp::None;
  const std::int64_t max_rows = std::min(b.rows, t ? a.cols : a.rows);
  const std::int64_t max_cols = std::min(b.cols, t ? a.rows : a.cols);
  // Mostly large parts (tiles full and cut), sometimes anything down to empty.
  o.rows = pick(g, 0, 3) ? pick(g, max_rows / 2, max_rows) : pick(g, 0, max_rows);
  o.cols = pick(g, 0, 3) ? pick(g, max_cols / 2, max_cols) : pick(g, 0, max_cols);
  o.b_row = pick(g, 0, b.rows - o.rows);
  o.b_col = pick(g, 0, b.cols - o.cols);
  o.a_row = pick(g, 0, a.rows - (t ? o.cols : o.rows));
  o.a_col = pick(g, 0, a.cols - (t ? o.rows : o.cols));
  static constexpr std::complex<double> alphas[] = {{1, 0}, {2, 0}, {-0.3, 0}, {0.7, 1.9}};
  static constexpr std::complex<double> betas[] = {{0, 0}, {1, 0}, {0.45, 0}, {-1.1, 0.3}};
  o.alpha = alphas[pick(g, 0, 3)];
  o.beta = betas[pick(g, 0, 3)];
  return o;
}

// `count` random cases; sizes up to max_side, so that both whole and cut 32 × 32 tiles occur.
template <class T>
void random_cases(unsigned seed, int count, std::int64_t max_side, bool small_buffers) {
  const int p = comm_size();
  std::mt19937_64 g(seed);
  std::int64_t most_rounds = 1;
  for (int c = 0; c < count; ++c) {
    const Shape a_shape{pick(g, 1, max_side), pick(g, 1, max_side)};
    const auto op = static_cast<MatrixOp>(pick(g, 0, 2));
    const Shape b_shape = pick(g, 0, 1) ? (op == MatrixOp::None ? a_shape : a_shape.transposed())
                                        : Shape{pick(g, 1, max_side), pick(g, 1, max_side)};
    const Layout a = random_layout(g, a_shape, p);
    const Layout b = random_layout(g, b_shape, p);
    RedistributeOptions o = random_options(g, a_shape, b_shape, op);
    if (small_buffers) // from a few elements per peer up to about a local block
      o.max_buffer_bytes = pick(g, 1, 4096);
    SCOPED_TRACE(testing::Message() << "case " << c << " seed " << seed);
    most_rounds = std::max(most_rounds,
                           check_case<T>(a, b, o, seed * 1000u + static_cast<unsigned>(c)).rounds);
  }
  // The small bounds did split exchanges (one rank exchanges nothing).
  if (small_buffers && p > 1) {
    EXPECT_GT(most_rounds, 1);
  }
}

class CudaRedistribute : public testing::Test {
protected:
  void SetUp() override { TESSERA_REQUIRE_GPU(); }
};

TEST_F(CudaRedistribute, RandomLayoutsF32) {
  random_cases<float>(11, 40, 90, false);
}
TEST_F(CudaRedistribute, RandomLayoutsF64) {
  random_cases<double>(12, 40, 90, false);
}
TEST_F(CudaRedistribute, RandomLayoutsC64) {
  random_cases<std::complex<float>>(13, 40, 90, false);
}
TEST_F(CudaRedistribute, RandomLayoutsC128) {
  random_cases<std::complex<double>>(14, 40, 90, false);
}

// Small buffer bounds: many rounds, pieces cut at round boundaries.
TEST_F(CudaRedistribute, RoundsF64) {
  random_cases<double>(21, 25, 70, true);
}
TEST_F(CudaRedistribute, RoundsC64) {
  random_cases<std::complex<float>>(22, 25, 70, true);
}

// Larger matrices: many whole tiles, several blocks per tile row of the grid-stride loop.
TEST_F(CudaRedistribute, LargerMatricesAllTypes) {
  const int p = comm_size();
  std::mt19937_64 g(31);
  for (int c = 0; c < 3; ++c) {
    const Shape s{pick(g, 300, 700), pick(g, 300, 700)};
    const Layout a = random_layout(g, s, p);
    const Layout b = random_layout(g, s.transposed(), p);
    for (auto op : {MatrixOp::Transpose, MatrixOp::ConjTranspose}) {
      RedistributeOptions o;
      o.op = op;
      o.alpha = {0.7, 1.9};
      o.beta = {-1.1, 0.3};
      SCOPED_TRACE(testing::Message() << "case " << c << " op " << static_cast<int>(op));
      check_case<float>(a, b, o, 1);
      check_case<double>(a, b, o, 2);
      check_case<std::complex<float>>(a, b, o, 3);
      check_case<std::complex<double>>(a, b, o, 4);
    }
  }
}

// Block-cyclic on 1 × 2 and 2 × 1 grids (1 × 1 on one rank), awkward blocks, both storage
// orders, to and from row blocks, every op.
TEST_F(CudaRedistribute, BlockCyclicGrids) {
  const int p = comm_size();
  const std::pair<int, int> grids[] = {{1, std::min(p, 2)}, {std::min(p, 2), 1}};
  const std::pair<std::int64_t, std::int64_t> blocks[] = {{3, 5}, {7, 2}, {13, 31}, {1, 1}};
  for (const auto& [pr, pc] : grids)
    for (const auto& [mb, nb] : blocks)
      for (auto storage : {StorageOrder::ColMajor, StorageOrder::RowMajor})
        for (auto op : {MatrixOp::None, MatrixOp::Transpose, MatrixOp::ConjTranspose}) {
          BlockCyclicSpec s;
          s.global = {67, 45};
          s.mb = mb;
          s.nb = nb;
          s.pr = pr;
          s.pc = pc;
          s.nranks = p;
          s.storage = storage;
          s.rsrc = pr - 1;
          const Layout cyclic = Layout::block_cyclic(s);
          const Shape target = op == MatrixOp::None ? s.global : s.global.transposed();
          const Layout rows = Layout::row_blocks(target, p, StorageOrder::RowMajor);
          RedistributeOptions o;
          o.op = op;
          o.alpha = {2, 0};
          o.beta = {0.45, 0};
          SCOPED_TRACE(testing::Message() << pr << "x" << pc << " grid, " << mb << "x" << nb
                                          << " blocks, op " << static_cast<int>(op));
          check_case<double>(cyclic, rows, o, 5);
          check_case<std::complex<double>>(cyclic, rows, o, 6);
          // And back, on a sub-matrix.
          RedistributeOptions back;
          back.op = op;
          back.rows = 20;
          back.cols = 17;
          back.a_row = op == MatrixOp::None ? 3 : 1;
          back.a_col = op == MatrixOp::None ? 1 : 3;
          back.b_row = 2;
          back.b_col = 4;
          back.alpha = {0.7, 1.9};
          check_case<std::complex<float>>(rows, cyclic, back, 7);
          check_case<float>(rows, cyclic, back, 8);
        }
}

// Everything of A on rank 0, B spread (and back): ranks with nothing of one side or the other.
TEST_F(CudaRedistribute, RanksWithNoData) {
  const int p = comm_size();
  const Shape s{41, 38};
  const Layout on_zero = Layout::grid({0, s.rows}, {0, s.cols}, {0}, p, StorageOrder::ColMajor);
  const Layout spread = Layout::blocks_2d(s, 1, p, GridOrder::RowMajor, StorageOrder::RowMajor, p);
  const Layout on_last = Layout::grid({0, s.rows}, {0, s.cols}, {p - 1}, p, StorageOrder::RowMajor);
  for (std::int64_t bound : {std::int64_t{0}, std::int64_t{100}}) {
    RedistributeOptions o;
    o.alpha = {-0.3, 0};
    o.beta = {1, 0};
    o.max_buffer_bytes = bound;
    check_case<double>(on_zero, spread, o, 9);
    check_case<double>(spread, on_zero, o, 10);
    check_case<std::complex<double>>(on_zero, on_last, o, 11);
  }
  // An empty sub-matrix: nothing moves, nothing is touched.
  RedistributeOptions none;
  none.rows = 0;
  none.cols = 0;
  check_case<float>(on_zero, spread, none, 12);
}

// With relabel the GPU writes the same target layout as the CPU.
TEST_F(CudaRedistribute, Relabel) {
  const int p = comm_size();
  std::mt19937_64 g(41);
  for (int c = 0; c < 6; ++c) {
    const Shape s{pick(g, 20, 80), pick(g, 20, 80)};
    const Layout a = random_layout(g, s, p);
    const Layout b = random_layout(g, s, p);
    RedistributeOptions o;
    o.relabel = true;
    o.alpha = {2, 0};
    check_case<double>(a, b, o, 13);
  }
}

// Blocks in host memory on the CUDA backend take the CPU path: the same result.
TEST_F(CudaRedistribute, HostMemoryOnTheCudaBackend) {
  const int p = comm_size();
  const int rank = comm_rank();
  const Layout a = Layout::row_blocks({33, 29}, p, StorageOrder::RowMajor);
  const Layout b = Layout::col_blocks({29, 33}, p, StorageOrder::ColMajor);
  RedistributeOptions o;
  o.op = MatrixOp::Transpose;
  o.alpha = {2, 0};
  RedistributePlan cuda(a, b, tessera::DType::f64, MPI_COMM_WORLD, Backend::Cuda, o);
  RedistributePlan cpu(a, b, tessera::DType::f64, MPI_COMM_WORLD, Backend::Cpu, o);
  EXPECT_EQ(cuda.backend(), Backend::Cuda);
  EXPECT_EQ(cuda.memory(), Memory::Host);
  const auto x = random_block<double>(a, rank, 3);
  std::vector<double> y1(static_cast<std::size_t>(b.local_extent(rank))), y2 = y1;
  cuda.execute(x.data(), y1.data());
  cpu.execute(x.data(), y2.data());
  EXPECT_EQ(first_byte_difference(y1, y2), -1);
}

// A device plan given host memory fails on every rank, naming the block.
TEST_F(CudaRedistribute, RejectsHostPointersOnADevicePlan) {
  const int p = comm_size();
  const int rank = comm_rank();
  const Layout a = Layout::row_blocks({16, 16}, p, StorageOrder::RowMajor);
  RedistributeOptions o;
  o.memory = Memory::Device;
  RedistributePlan plan(a, a, tessera::DType::f32, MPI_COMM_WORLD, Backend::Auto, o);
  EXPECT_EQ(plan.backend(), Backend::Cuda);
  std::vector<float> x(static_cast<std::size_t>(a.local_extent(rank)) + 1);
  tessera::cuda::DeviceBuffer d_a(x.size() * sizeof(float)), d_b(x.size() * sizeof(float));
  // Only rank 0 passes host memory; every rank raises.
  const void* in = rank == 0 ? static_cast<const void*>(x.data()) : d_a.data();
  EXPECT_THROW(plan.execute(in, d_b.data()), tessera::InputError);
  // And the plan still runs afterwards.
  EXPECT_NO_THROW(plan.execute(d_a.data(), d_b.data()));
}

// Resolution and refusals that need no GPU: they run (and pass) on any machine.
TEST(CudaRedistributeChoice, AutoAndRefusals) {
  const int p = comm_size();
  const Layout a = Layout::row_blocks({8, 8}, p, StorageOrder::RowMajor);
  // Auto with host memory: the CPU, without asking the CUDA driver.
  RedistributePlan host(a, a, tessera::DType::f64, MPI_COMM_WORLD);
  EXPECT_EQ(host.backend(), Backend::Cpu);
  EXPECT_EQ(host.memory(), Memory::Host);
  RedistributeOptions o;
  o.memory = Memory::Device;
  if (!tessera::cuda::compiled()) {
    EXPECT_THROW(RedistributePlan(a, a, tessera::DType::f64, MPI_COMM_WORLD, o),
                 tessera::NotCompiled);
    EXPECT_THROW(RedistributePlan(a, a, tessera::DType::f64, MPI_COMM_WORLD, Backend::Cuda),
                 tessera::NotCompiled);
    return;
  }
  EXPECT_THROW(RedistributePlan(a, a, tessera::DType::f64, MPI_COMM_WORLD, Backend::Cpu, o),
               tessera::InputError);
  std::string why;
  if (!tessera::test::all_ranks_have_gpu(why)) {
    // No GPU on some rank: device memory cannot be redistributed, on every rank alike.
    EXPECT_THROW(RedistributePlan(a, a, tessera::DType::f64, MPI_COMM_WORLD, o),
                 tessera::InputError);
    return;
  }
  tessera::test::bind_gpu();
  EXPECT_THROW(RedistributePlan(a, a, tessera::DType::i32, MPI_COMM_WORLD, Backend::Cuda, o),
               tessera::InputError);
}

} // namespace
