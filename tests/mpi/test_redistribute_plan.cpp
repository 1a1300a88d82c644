// RedistributePlan against the serial reference (tests/mpi/redistribute_reference.hpp) on random
// layout pairs: row, column and 2-D blocks, block-cyclic (blocks 1 to 64 and awkward sizes, grids
// up to 3 × 2 and 2 × 3, any source process, padded leading dimensions, ranks outside the grid)
// and general grids; every op, dtype and sub-matrix; repeated executes; traffic accounting.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <random>
#include <utility>
#include <vector>

#include <tessera/error.hpp>
#include <tessera/layout.hpp>
#include <tessera/redistribute_plan.hpp>

#include "redistribute_random.hpp"
#include "redistribute_reference.hpp"

namespace {

using tessera::BlockCyclicSpec;
using tessera::DType;
using tessera::GridOrder;
using tessera::Layout;
using tessera::MatrixOp;
using tessera::RedistributeOptions;
using tessera::RedistributePlan;
using tessera::Shape;
using tessera::StorageOrder;
using tessera::test::comm_rank;
using tessera::test::comm_size;
using tessera::test::local_block;
using tessera::test::pick;
using tessera::test::random_layout;

template <class T>
void check_case(const Layout& a, const Layout& b, RedistributeOptions o) {
  const int rank = comm_rank();
  RedistributePlan plan(a, b, tessera::dtype_of<T>, MPI_COMM_WORLD, o);
  if (o.rows < 0 || o.cols < 0) { // the whole of B, as the plan reads it
    o.rows = b.global().rows - o.b_row;
    o.cols = b.global().cols - o.b_col;
  }
  const auto a_local = local_block<T>(a, rank, 1);
  const auto b_start = local_block<T>(b, rank, 2);
  auto expected = b_start;
  tessera::test::redistribute_reference(a, b, o, a_local.data(), expected.data(), MPI_COMM_WORLD);
  // Twice from the same start: a plan is reused.
  for (int repeat = 0; repeat < 2; ++repeat) {
    auto got = b_start;
    plan.execute(a_local.empty() ? nullptr : a_local.data(), got.empty() ? nullptr : got.data());
    EXPECT_EQ(got, expected) << "repeat "
                             << repeat; // not ASSERT: every rank goes on to the collectives
  }
  // Every element sent is one this rank holds of op(A) and does not hold in B.
  const auto& t = plan.traffic();
  EXPECT_EQ(t.sent, t.sent_lower_bound);
  std::int64_t sent = t.sent, received = t.received;
  MPI_Allreduce(MPI_IN_PLACE, &sent, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &received, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sent, received);
  std::int64_t moved = t.received + t.kept;
  MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(moved, o.rows * o.cols * static_cast<std::int64_t>(sizeof(T)));
}

RedistributeOptions random_options(std::mt19937_64& g, Shape a, Shape b, MatrixOp op) {
  RedistributeOptions o;
  o.op = op;
  const bool t = op != MatrixOp::None;
  // The largest sub-matrix that fits both, then a random part of it.
  const std::int64_t max_rows = std::min(b.rows, t ? a.cols : a.rows);
  const std::int64_t max_cols = std::min(b.cols, t ? a.rows : a.cols);
  o.rows = pick(g, 0, max_rows);
  o.cols = pick(g, 0, max_cols);
  o.b_row = pick(g, 0, b.rows - o.rows);
  o.b_col = pick(g, 0, b.cols - o.cols);
  o.a_row = pick(g, 0, a.rows - (t ? o.cols : o.rows));
  o.a_col = pick(g, 0, a.cols - (t ? o.rows : o.cols));
  static constexpr std::complex<double> alphas[] = {{1, 0}, {2, 0}, {-0.5, 0}, {0.5, 2}};
  static constexpr std::complex<double> betas[] = {{0, 0}, {1, 0}, {0.5, 0}, {-2, 1}};
  o.alpha = alphas[pick(g, 0, 3)];
  o.beta = betas[pick(g, 0, 3)];
  return o;
}

template <class T>
void random_cases(unsigned seed, int count) {
  const int p = comm_size();
  std::mt19937_64 g(seed);
  for (int c = 0; c < count; ++c) {
    const Shape a_shape{pick(g, 1, 70), pick(g, 1, 70)};
    const MatrixOp op = static_cast<MatrixOp>(pick(g, 0, 2));
    const Shape b_shape = pick(g, 0, 1) ? (op == MatrixOp::None ? a_shape : a_shape.transposed())
                                        : Shape{pick(g, 1, 70), pick(g, 1, 70)};
    const Layout a = random_layout(g, a_shape, p);
    const Layout b = random_layout(g, b_shape, p);
    RedistributeOptions o = random_options(g, a_shape, b_shape, op);
    SCOPED_TRACE(testing::Message() << "case " << c << " seed " << seed);
    check_case<T>(a, b, o);
  }
}

TEST(RedistributePlan, RandomLayoutsF64) {
  random_cases<double>(11, 120);
}
TEST(RedistributePlan, RandomLayoutsF32) {
  random_cases<float>(12, 40);
}
TEST(RedistributePlan, RandomLayoutsC64) {
  random_cases<std::complex<float>>(13, 40);
}
TEST(RedistributePlan, RandomLayoutsC128) {
  random_cases<std::complex<double>>(14, 60);
}

TEST(RedistributePlan, RowBlocksTransposeMovesWhatTransposePlanMoves) {
  const int p = comm_size();
  const Shape s{37, 23};
  const Layout a = Layout::row_blocks(s, p);
  const Layout b = Layout::row_blocks(s.transposed(), p);
  RedistributeOptions o;
  o.op = MatrixOp::Transpose;
  check_case<double>(a, b, o);
}

TEST(RedistributePlan, SameLayoutCopiesLocallyOnly) {
  BlockCyclicSpec s;
  s.global = {40, 33};
  s.mb = 4;
  s.nb = 5;
  s.pc = comm_size();
  const Layout l = Layout::block_cyclic(s);
  RedistributePlan plan(l, l, DType::f64, MPI_COMM_WORLD);
  EXPECT_EQ(plan.traffic().sent, 0);
  EXPECT_EQ(plan.traffic().received, 0);
  check_case<double>(l, l, {});
}

// One plan, other scalars at each execute: the options' are only the default.
TEST(RedistributePlan, ScalarsPerExecute) {
  const int p = comm_size(), rank = comm_rank();
  std::mt19937_64 g(15);
  for (int c = 0; c < 10; ++c) {
    const Shape s{pick(g, 1, 40), pick(g, 1, 40)};
    const Layout a = random_layout(g, s, p);
    const Layout b = random_layout(g, s.transposed(), p);
    RedistributeOptions o;
    o.op = MatrixOp::ConjTranspose;
    RedistributePlan plan(a, b, DType::c128, MPI_COMM_WORLD, o);
    o.rows = s.cols;
    o.cols = s.rows;
    const auto a_local = local_block<std::complex<double>>(a, rank, 1);
    const auto b_start = local_block<std::complex<double>>(b, rank, 2);
    for (const auto& [alpha, beta] :
         {std::pair<std::complex<double>, std::complex<double>>{{0.5, -2}, {1.5, 0.5}},
          {{-1, 0}, {0, 0}}}) {
      o.alpha = alpha;
      o.beta = beta;
      auto expected = b_start, got = b_start;
      tessera::test::redistribute_reference(a, b, o, a_local.data(), expected.data(),
                                            MPI_COMM_WORLD);
      plan.execute(a_local.empty() ? nullptr : a_local.data(), got.empty() ? nullptr : got.data(),
                   alpha, beta);
      EXPECT_EQ(got, expected) << "case " << c;
    }
  }
}

TEST(RedistributePlan, RejectsMismatchedArguments) {
  const int p = comm_size();
  const Layout a = Layout::row_blocks({4, 4}, p);
  EXPECT_THROW(RedistributePlan(a, Layout::row_blocks({4, 4}, p + 1), DType::f64, MPI_COMM_WORLD),
               tessera::InputError);
  RedistributeOptions o;
  o.rows = 5;
  o.cols = 4;
  EXPECT_THROW(RedistributePlan(a, a, DType::f64, MPI_COMM_WORLD, o), tessera::InputError);
  // Rank 0 holds whole 4-element rows: a leading dimension of 2 is too short.
  const Layout short_ld = Layout::grid({0, 4}, {0, 4}, {0}, p, StorageOrder::RowMajor, 2);
  EXPECT_THROW(RedistributePlan(short_ld, a, DType::f64, MPI_COMM_WORLD), tessera::InputError);
  RedistributePlan plan(a, a, DType::f64, MPI_COMM_WORLD);
  std::vector<float> x(16);
  EXPECT_THROW(plan.execute(x.data(), x.data()), tessera::InputError);
}

} // namespace
