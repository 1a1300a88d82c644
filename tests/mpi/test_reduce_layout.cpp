// Reductions over a matrix in any layout against the row-block plan over the same matrix, bit
// for bit: block-cyclic (blocks of 1, 3, 64 and awkward sizes, any source process, padded
// leading dimensions, ranks outside the grid), 2-D blocks on every grid up to 2 × 3 and 3 × 2,
// column blocks, row blocks in column-major storage or padded, random grids of blocks, ranks
// holding nothing, every axis, f32 and f64, fresh random data at each run. Since the row-block
// plan gives the same bits at any rank count (test_reduce_plan), so does every layout.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "mpi/reduce_plan.hpp"
#include "redistribute_random.hpp"
#include "reduce_random.hpp"

namespace {

using tessera::Axis;
using tessera::BlockCyclicSpec;
using tessera::BlockDistribution;
using tessera::DType;
using tessera::GridOrder;
using tessera::Layout;
using tessera::Op;
using tessera::ReduceOptions;
using tessera::ReducePlan;
using tessera::Shape;
using tessera::StorageOrder;
using tessera::test::comm_rank;
using tessera::test::comm_size;
using tessera::test::global_matrix;
using tessera::test::shared_seed;

// This rank's local block of `a` in layout l; what it holds beyond the matrix (padding to the
// leading dimension) is NaN, which would show in every op if it were read.
template <class T>
std::vector<T> local_block(const Layout& l, const std::vector<T>& a) {
  const int rank = comm_rank();
  std::vector<T> b(static_cast<std::size_t>(l.local_extent(rank)),
                   std::numeric_limits<T>::quiet_NaN());
  const Shape g = l.global();
  for (std::int64_t i = 0; i < g.rows; ++i)
    for (std::int64_t j = 0; j < g.cols; ++j)
      if (const auto x = l.local_index(i, j); x.rank == rank)
        b[static_cast<std::size_t>(l.local_offset(rank, x.row, x.col))] =
            a[static_cast<std::size_t>(i * g.cols + j)];
  return b;
}

bool same(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

const std::vector<Op> kOps = {Op::Sum, Op::Mean,  Op::Norm2,  Op::Min,
                              Op::Max, Op::Norm1, Op::NormInf};
const std::vector<Axis> kAxes = {Axis::All, Axis::Rows, Axis::Cols};

// The plan over l and the row-block plan over the same matrix `a`: the same bits, every value.
template <class T>
void check_layout(const Layout& l, const std::vector<T>& a, const std::string& what, Axis axis,
                  const std::vector<Op>& ops = kOps, ReduceOptions options = {}) {
  const int rank = comm_rank();
  const Shape g = l.global();
  SCOPED_TRACE(what + ", shape " + g.str() + ", " +
               std::string(tessera::dtype_name(tessera::dtype_of<T>)) + ", axis " +
               std::string(tessera::axis_name(axis)) + ", ranks " + std::to_string(comm_size()));
  const BlockDistribution dist(g, comm_size());
  ReducePlan rows(dist, tessera::dtype_of<T>, MPI_COMM_WORLD, tessera::Backend::Cpu, ops, axis,
                  options);
  const auto want = rows.execute(a.data() + dist.begin(rank) * g.cols);
  ReducePlan plan(l, tessera::dtype_of<T>, MPI_COMM_WORLD, tessera::Backend::Cpu, ops, axis,
                  options);
  const std::vector<T> block = local_block(l, a);
  const auto got = plan.execute(block.empty() ? nullptr : block.data());
  ASSERT_EQ(got.values.size(), want.values.size());
  for (std::size_t k = 0; k < ops.size(); ++k) {
    ASSERT_EQ(got.values[k].size(), want.values[k].size()) << tessera::op_name(ops[k]);
    std::int64_t bad = 0, first = -1;
    for (std::size_t i = 0; i < got.values[k].size(); ++i)
      if (!same(got.values[k][i], want.values[k][i]) && bad++ == 0)
        first = static_cast<std::int64_t>(i);
    EXPECT_EQ(bad, 0) << tessera::op_name(ops[k]) << ": first mismatch at " << first << ": "
                      << (first >= 0 ? got.values[k][first] : 0.0) << " vs "
                      << (first >= 0 ? want.values[k][first] : 0.0);
  }
}

BlockCyclicSpec cyclic(Shape g, std::int64_t mb, std::int64_t nb, int pr, int pc) {
  BlockCyclicSpec s;
  s.global = g;
  s.mb = mb;
  s.nb = nb;
  s.pr = pr;
  s.pc = pc;
  s.nranks = comm_size();
  return s;
}

// The named layouts of g over this job's ranks: every grid that fits (ranks beyond it hold
// nothing), both storage orders, several block sizes and source processes, padded leading
// dimensions.
std::vector<std::pair<std::string, Layout>> named_layouts(Shape g) {
  const int p = comm_size();
  std::vector<std::pair<std::string, Layout>> v;
  for (auto storage : {StorageOrder::RowMajor, StorageOrder::ColMajor}) {
    const std::string order = storage == StorageOrder::RowMajor ? " row-major" : " col-major";
    v.emplace_back("row blocks" + order, Layout::row_blocks(g, p, storage));
    v.emplace_back("col blocks" + order, Layout::col_blocks(g, p, storage));
  }
  // Row blocks as BlockDistribution splits them, rows padded: redistributed all the same.
  const Layout rows = Layout::row_blocks(g, p);
  std::vector<int> owners;
  for (int r = 0; r < p; ++r)
    owners.push_back(r);
  v.emplace_back("row blocks, lld cols + 3",
                 Layout::grid(rows.row_splits(), rows.col_splits(), owners, p,
                              StorageOrder::RowMajor, g.cols + 3));
  for (int pr = 1; pr <= 3; ++pr)
    for (int pc = 1; pc <= 3 && pr * pc <= p; ++pc) {
      if (pr * pc > 6)
        continue;
      const std::string grid = std::to_string(pr) + " x " + std::to_string(pc);
      v.emplace_back("2-D blocks " + grid,
                     Layout::blocks_2d(g, pr, pc, GridOrder::RowMajor, StorageOrder::RowMajor, p));
      v.emplace_back("2-D blocks col-major, grid by columns " + grid,
                     Layout::blocks_2d(g, pr, pc, GridOrder::ColMajor, StorageOrder::ColMajor, p));
      for (std::int64_t nb : {1, 3, 64, 7}) {
        const std::int64_t mb = nb == 7 ? 13 : nb;
        auto s = cyclic(g, mb, nb, pr, pc);
        const std::string name =
            "block-cyclic " + std::to_string(mb) + " x " + std::to_string(nb) + " on " + grid;
        v.emplace_back(name, Layout::block_cyclic(s));
        s.rsrc = pr - 1;
        s.csrc = pc - 1;
        s.storage = StorageOrder::RowMajor;
        s.grid_order = GridOrder::ColMajor;
        v.emplace_back(name + ", source (" + std::to_string(s.rsrc) + ", " +
                           std::to_string(s.csrc) + "), row-major",
                       Layout::block_cyclic(s));
      }
      // A padded leading dimension, one for every rank (the largest local extent + 2).
      auto s = cyclic(g, 5, 2, pr, pc);
      const Layout tight = Layout::block_cyclic(s);
      std::int64_t ld = 1;
      for (int r = 0; r < p; ++r)
        ld = std::max(ld, tight.leading_dimension(r));
      s.lld = ld + 2;
      v.emplace_back("block-cyclic 5 x 2 on " + grid + ", lld + 2", Layout::block_cyclic(s));
    }
  return v;
}

// 1 × 1, one row, one column, fewer rows than ranks, rows cut inside 64-row blocks, a wide and
// a tall one.
const std::vector<Shape> kShapes = {{1, 1}, {1, 9}, {11, 1}, {3, 5}, {67, 45}, {130, 7}, {5, 150}};

template <class T>
void named_cases(const std::vector<Shape>& shapes) {
  for (const auto& shape : shapes) {
    const auto a = global_matrix<T>(shape, shared_seed());
    for (const auto& [name, layout] : named_layouts(shape))
      for (auto axis : kAxes)
        check_layout(layout, a, name, axis);
  }
}

TEST(ReduceLayout, NamedLayoutsF64) {
  named_cases<double>(kShapes);
}

// f32 takes the same paths after the redistribution: the shapes that cut 64-row blocks.
TEST(ReduceLayout, NamedLayoutsF32) {
  named_cases<float>({{3, 5}, {67, 45}, {130, 7}});
}

// Column-major row blocks whose leading dimension is what tight row-major ones would have (square
// local blocks): they must still be redistributed.
TEST(ReduceLayout, ColumnMajorSquareRowBlocks) {
  const Shape shape{3 * comm_size(), 3};
  const auto a = global_matrix<double>(shape, shared_seed());
  for (auto axis : kAxes)
    check_layout(Layout::row_blocks(shape, comm_size(), StorageOrder::ColMajor), a,
                 "row blocks col-major, 3 x 3 each", axis);
}

// Random layouts (tests/mpi/redistribute_random.hpp): general grids with empty blocks and any
// owners, block-cyclic with random blocks, grids and sources.
TEST(ReduceLayout, RandomLayouts) {
  const unsigned seed = shared_seed();
  std::mt19937_64 g(seed);
  for (int k = 0; k < 40; ++k) {
    const Shape shape{tessera::test::pick(g, 0, 90), tessera::test::pick(g, 1, 70)};
    const Layout l = tessera::test::random_layout(g, shape, comm_size());
    const std::string what =
        "random layout " + std::to_string(k) + ", seed " + std::to_string(seed);
    const Axis axis = kAxes[static_cast<std::size_t>(k % 3)];
    if (k % 2 == 0)
      check_layout(l, global_matrix<double>(shape, seed + k), what, axis);
    else
      check_layout(l, global_matrix<float>(shape, seed + k), what, axis);
  }
}

// The Norm2 rescue reads the block again: it must read the row block, not the layout's.
TEST(ReduceLayout, Norm2RescueNearOverflowAndUnderflow) {
  const Shape shape{70, 33};
  auto a = global_matrix<double>(shape, shared_seed());
  for (std::size_t k = 0; k < a.size(); ++k)
    a[k] = std::ldexp(a[k], k % 2 ? 1000 : -1060);
  auto s = cyclic(shape, 3, 4, 1, std::min(comm_size(), 2));
  for (auto axis : kAxes) {
    check_layout(Layout::block_cyclic(s), a, "block-cyclic 3 x 4", axis, {Op::Norm2});
    check_layout(Layout::col_blocks(shape, comm_size()), a, "col blocks", axis,
                 {Op::Sum, Op::Norm2, Op::NormInf});
  }
}

TEST(ReduceLayout, SkipsMissingValuesAsRowBlocksDo) {
  const Shape shape{41, 29};
  const unsigned seed = shared_seed();
  auto a = global_matrix<double>(shape, seed);
  for (std::size_t k = seed % 7; k < a.size(); k += 7)
    a[k] = std::numeric_limits<double>::quiet_NaN();
  ReduceOptions o;
  o.missing.skip_nan = true;
  const Layout l = Layout::block_cyclic(cyclic(shape, 4, 3, 1, comm_size()));
  for (auto axis : kAxes)
    check_layout(l, a, "block-cyclic 4 x 3", axis,
                 {Op::Sum, Op::Mean, Op::Count, Op::Min, Op::Max, Op::Norm2}, o);
}

// One plan, executed on fresh data: the held row block is rewritten each time.
TEST(ReduceLayout, RepeatedExecutesOnNewData) {
  const Shape shape{50, 21};
  const Layout l =
      Layout::blocks_2d(shape, 1, comm_size(), GridOrder::RowMajor, StorageOrder::ColMajor);
  const BlockDistribution dist(shape, comm_size());
  ReducePlan plan(l, DType::f64, MPI_COMM_WORLD, tessera::Backend::Cpu, {Op::Sum}, Axis::Rows);
  ReducePlan rows(dist, DType::f64, MPI_COMM_WORLD, tessera::Backend::Cpu, {Op::Sum}, Axis::Rows);
  for (int k = 0; k < 3; ++k) {
    const auto a = global_matrix<double>(shape, shared_seed());
    const auto block = local_block(l, a);
    EXPECT_EQ(plan.execute(block.data()).values,
              rows.execute(a.data() + dist.begin(comm_rank()) * shape.cols).values);
  }
}

TEST(ReduceLayout, RejectsWhatItCannotReduce) {
  const Shape shape{10, 12};
  const int p = comm_size();
  // A layout over another number of ranks.
  EXPECT_THROW(ReducePlan(Layout::col_blocks(shape, p + 1), DType::f64, MPI_COMM_WORLD,
                          tessera::Backend::Cpu, {Op::Sum}, Axis::All),
               tessera::InputError);
  // Complex data.
  EXPECT_THROW(ReducePlan(Layout::col_blocks(shape, p), DType::c64, MPI_COMM_WORLD,
                          tessera::Backend::Cpu, {Op::Sum}, Axis::All),
               tessera::InputError);
  // A null block on one rank only: every rank raises.
  ReducePlan plan(Layout::col_blocks(shape, p), DType::f64, MPI_COMM_WORLD, tessera::Backend::Cpu,
                  {Op::Sum}, Axis::All);
  const std::vector<double> block(static_cast<std::size_t>(shape.size()), 1.0);
  EXPECT_THROW(plan.execute(comm_rank() == p - 1 ? nullptr : block.data()), tessera::InputError);
  EXPECT_EQ(plan.execute(block.data())[Op::Sum].at(0), static_cast<double>(shape.size()));
}

} // namespace
