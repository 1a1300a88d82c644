// Distributed reductions against the serial reference: every op along every axis for f32 and
// f64, awkward shapes (row blocks cut by rank boundaries, blocks spread over several ranks, more
// ranks than rows, empty matrices), several thread counts. Every value, the Sum family included,
// must equal the serial reference bit for bit: since the reference does not depend on the rank
// count, passing at 1, 2, 3 and 4 ranks proves the results are rank-count independent. The same
// holds near overflow and underflow (the Norm2 rescue), where norms are also checked against
// accurate ones.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../norm2_test_support.hpp"
#include "core/throw.hpp"
#include "cpu/reference.hpp"
#include "mpi/reduce_plan.hpp"
#include "reduce_random.hpp"

namespace {

using tessera::Axis;
using tessera::BlockDistribution;
using tessera::DType;
using tessera::Op;
using tessera::ReducePlan;
using tessera::Shape;
using tessera::test::global_matrix;
using tessera::test::shared_seed;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

bool same(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

const std::vector<Op> kOps = {Op::Sum,   Op::Min,   Op::Max,    Op::Mean,
                              Op::Norm1, Op::Norm2, Op::NormInf};
const std::vector<Axis> kAxes = {Axis::All, Axis::Rows, Axis::Cols};

// Every op (or `ops`) along `axis` in one plan, checked against the reference on this rank, and
// checked to be the same bits on every rank.
template <class T>
tessera::ReduceResult check_reduce(const std::vector<T>& a, Shape shape, unsigned seed, Axis axis,
                                   const std::vector<Op>& ops = kOps) {
  const int rank = world_rank(), size = world_size();
  SCOPED_TRACE(
      "shape " + shape.str() + ", dtype " + std::string(tessera::dtype_name(tessera::dtype_of<T>)) +
      ", axis " + std::string(tessera::axis_name(axis)) + ", seed " + std::to_string(seed) +
      ", ranks " + std::to_string(size) + ", threads " + std::to_string(omp_get_max_threads()));
  const BlockDistribution dist(shape, size);
  ReducePlan plan(dist, tessera::dtype_of<T>, MPI_COMM_WORLD, tessera::Backend::Cpu, ops, axis);
  const auto result = plan.execute(a.data() + dist.begin(rank) * shape.cols);
  EXPECT_EQ(result.values.size(), ops.size());
  for (std::size_t k = 0; k < ops.size() && k < result.values.size(); ++k) {
    const Op op = ops[k];
    const auto expect = tessera::reference::reduce(op, axis, a.data(), shape.rows, shape.cols);
    const auto& got = result[op];
    if (got.size() != expect.size()) {
      ADD_FAILURE() << tessera::op_name(op) << ": " << got.size() << " values, expected "
                    << expect.size();
      continue;
    }
    std::int64_t bad = 0, first = -1;
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!same(got[i], expect[i]) && bad++ == 0)
        first = static_cast<std::int64_t>(i);
    EXPECT_EQ(bad, 0) << tessera::op_name(op) << ": first mismatch at " << first << ": "
                      << (first >= 0 ? got[first] : 0.0) << " vs "
                      << (first >= 0 ? expect[first] : 0.0);
    // The same bits on every rank.
    std::vector<double> root = got;
    MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    bool equal = true;
    for (std::size_t i = 0; i < got.size(); ++i)
      equal = equal && same(root[i], got[i]);
    EXPECT_TRUE(equal) << tessera::op_name(op) << " differs from rank 0's on rank " << rank;
  }
  return result;
}

// Shapes whose 64-row blocks are cut by rank boundaries at 2, 3 and 4 ranks, blocks spread
// over several ranks (fewer than 64 rows per rank), more ranks than rows, empty matrices;
// 33001 x 3: super-blocks of blocks (16384 rows) cut by rank boundaries, the last one partial.
const std::vector<Shape> kShapes = {{1, 1},    {1, 37},  {41, 1},     {17, 31}, {3, 5}, {130, 7},
                                    {191, 64}, {257, 3}, {1000, 999}, {0, 5},   {6, 0}, {33001, 3}};

template <class T>
void all_cases() {
  for (const auto& shape : kShapes) {
    const unsigned seed = shared_seed();
    const auto a = global_matrix<T>(shape, seed);
    for (auto axis : kAxes)
      check_reduce(a, shape, seed, axis);
  }
}

TEST(ReducePlan, F64EveryOpAndAxis) {
  all_cases<double>();
}

TEST(ReducePlan, F32EveryOpAndAxis) {
  all_cases<float>();
}

TEST(ReducePlan, IndependentOfThreadCount) {
  const int saved = omp_get_max_threads();
  const Shape shape{517, 300};
  const unsigned seed = shared_seed();
  const auto a = global_matrix<double>(shape, seed);
  for (int threads = 1; threads <= 3; ++threads) {
    omp_set_num_threads(threads);
    for (auto axis : kAxes)
      check_reduce(a, shape, seed, axis);
  }
  omp_set_num_threads(saved);
}

TEST(ReducePlan, NaNPropagatesToEveryOp) {
  const Shape shape{150, 20};
  const unsigned seed = shared_seed();
  auto a = global_matrix<double>(shape, seed);
  a[static_cast<std::size_t>(seed % a.size())] = std::numeric_limits<double>::quiet_NaN();
  for (auto axis : kAxes)
    check_reduce(a, shape, seed, axis);
}

TEST(ReducePlan, RepeatedExecutesGiveTheSameBits) {
  const Shape shape{300, 41};
  const unsigned seed = shared_seed();
  const auto a = global_matrix<float>(shape, seed);
  const BlockDistribution dist(shape, world_size());
  tessera::PhaseTimers timers;
  ReducePlan plan(dist, DType::f32, MPI_COMM_WORLD, tessera::Backend::Cpu,
                  {Op::Norm2, Op::Mean, Op::Sum}, Axis::Cols, {.timers = &timers});
  const float* block = a.data() + dist.begin(world_rank()) * shape.cols;
  const auto first = plan.execute(block);
  const auto second = plan.execute(block);
  EXPECT_EQ(first.values, second.values) << "seed " << seed;
  EXPECT_EQ(timers.phases().at("reduce.execute").calls, 2);
  // Norm2, Mean and Sum all come from one read of the block.
  EXPECT_DOUBLE_EQ(plan.bytes_read(), 4.0 * static_cast<double>(dist.local_size(world_rank())));
}

// Norms within a few ulps of the accurate ones (tests/norm2_test_support.hpp).
void check_accuracy(const tessera::ReduceResult& r, const std::vector<double>& a, Shape shape,
                    Axis axis) {
  const auto want = tessera::test::accurate_norms(axis, a.data(), shape.rows, shape.cols);
  const auto& got = r[Op::Norm2];
  ASSERT_EQ(got.size(), want.size());
  const std::int64_t n = tessera::test::vector_length(axis, shape.rows, shape.cols);
  for (std::size_t k = 0; k < got.size(); ++k)
    ASSERT_TRUE(tessera::test::close_norm(got[k], want[k], n))
        << "norm2 " << k << " is " << got[k] << ", accurately " << want[k];
}

const std::vector<Shape> kExtremeShapes = {{1, 1}, {3, 5}, {130, 7}, {191, 64}, {67, 300}};

// Sums of squares that overflow or underflow (1e300, 1e154, 1e-200, subnormals, huge and tiny
// entries mixed, one huge row or column among normal ones, zeros, inf): the rescue gives
// accurate norms with the same bits at every rank count, with NormInf computed alongside (the
// rescue reuses it) or not (it makes its own pass), and with other ops in the same plan.
TEST(ReducePlanNorm2, AccurateAndRankCountIndependentNearOverflowAndUnderflow) {
  for (const auto& c : tessera::test::extreme_cases())
    for (const auto& shape : kExtremeShapes) {
      SCOPED_TRACE(c.name);
      const auto a = tessera::test::extreme_matrix(c, shape.rows, shape.cols);
      for (auto axis : kAxes) {
        check_accuracy(check_reduce(a, shape, 0, axis), a, shape, axis);
        check_accuracy(check_reduce(a, shape, 0, axis, {Op::Sum, Op::Norm2, Op::Mean}), a, shape,
                       axis);
      }
    }
}

TEST(ReducePlanNorm2, IndependentOfThreadCount) {
  const int saved = omp_get_max_threads();
  const Shape shape{517, 300};
  for (const auto& c : tessera::test::extreme_cases()) {
    if (c.name != "huge and tiny mixed" &&
        c.name != "a tiny column and a huge column among normal ones")
      continue;
    SCOPED_TRACE(c.name);
    const auto a = tessera::test::extreme_matrix(c, shape.rows, shape.cols);
    for (int threads = 1; threads <= 3; ++threads) {
      omp_set_num_threads(threads);
      for (auto axis : kAxes)
        check_accuracy(check_reduce(a, shape, 0, axis, {Op::Norm2}), a, shape, axis);
    }
  }
  omp_set_num_threads(saved);
}

TEST(ReducePlan, ComplexDataIsAnInputErrorOnEveryRank) {
  const BlockDistribution dist({8, 8}, world_size());
  try {
    ReducePlan plan(dist, DType::c64, MPI_COMM_WORLD, tessera::Backend::Cpu, {Op::Sum}, Axis::All);
    ADD_FAILURE() << "no error";
  } catch (const tessera::InputError& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_NE(std::string(e.what()).find("c64"), std::string::npos) << e.what();
  }
}

TEST(ReducePlan, NoOpsIsAnInputError) {
  const BlockDistribution dist({8, 8}, world_size());
  EXPECT_THROW(ReducePlan(dist, DType::f64, MPI_COMM_WORLD, tessera::Backend::Cpu, {}, Axis::All),
               tessera::InputError);
}

} // namespace
