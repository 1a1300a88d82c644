// The OpenMP reduction kernels, assembled into whole results in the canonical order, against
// the serial reference: every op and axis, f32 and f64, 1-3 threads, compared bit for bit.
#include <gtest/gtest.h>
#include <omp.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cpu/reduce.hpp"
#include "cpu/reference.hpp"

using namespace tessera;

namespace {

constexpr Op kOps[] = {Op::Sum, Op::Min, Op::Max, Op::Mean, Op::Norm1, Op::Norm2, Op::NormInf};
constexpr Axis kAxes[] = {Axis::All, Axis::Rows, Axis::Cols};

struct Shape2 {
  std::int64_t rows, cols;
};
const Shape2 kShapes[] = {
    {1, 1},    {1, 300},   {300, 1},   {17, 31},    {64, 128},
    {65, 129}, {127, 257}, {131, 263}, {1000, 999}, {70, 16411}}; // more than one column tile

unsigned fresh_seed() {
  return std::random_device{}();
}

// Values spread over many orders of magnitude and both signs, so that a different order of
// additions almost surely changes the rounded result.
template <class T>
std::vector<T> random_matrix(std::size_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> d(0.0, 1.0);
  std::uniform_int_distribution<int> e(-12, 12);
  std::vector<T> v(n);
  for (auto& x : v)
    x = static_cast<T>(std::ldexp(d(rng), e(rng)));
  return v;
}

// Bit patterns, so that NaN and signed zeros compare exactly too.
std::vector<std::uint64_t> bits(const std::vector<double>& v) {
  std::vector<std::uint64_t> b(v.size());
  for (std::size_t k = 0; k < v.size(); ++k)
    b[k] = std::bit_cast<std::uint64_t>(v[k]);
  return b;
}

// Whole results from the kernels, combined the way the distributed plan does on one rank.
template <class T>
std::vector<double> kernel_reduce(Op op, Axis axis, const T* a, std::int64_t rows,
                                  std::int64_t cols) {
  if (axis == Axis::Rows) {
    std::vector<double> r(static_cast<std::size_t>(rows));
    cpu::reduce_rows(op, a, rows, cols, r.data());
    for (auto& x : r)
      x = cpu::finalize(op, x, static_cast<double>(cols));
    return r;
  }
  const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  if (axis == Axis::All) {
    std::vector<double> r(static_cast<std::size_t>(rows));
    cpu::reduce_rows(op, a, rows, cols, r.data());
    double total = cpu::identity(op);
    for (std::int64_t g = 0; g < groups; ++g) {
      double p = cpu::identity(op);
      for (std::int64_t i = g * kReduceBlockRows; i < std::min(rows, (g + 1) * kReduceBlockRows);
           ++i)
        p = cpu::combine(op, p, r[i]);
      total = cpu::combine(op, total, p);
    }
    return {cpu::finalize(op, total, static_cast<double>(rows) * static_cast<double>(cols))};
  }
  std::vector<double> partial(static_cast<std::size_t>(groups * cols));
  cpu::reduce_col_groups(op, a, rows, cols, partial.data());
  std::vector<double> v(static_cast<std::size_t>(cols), cpu::identity(op));
  for (std::int64_t g = 0; g < groups; ++g)
    for (std::int64_t j = 0; j < cols; ++j)
      v[j] = cpu::combine(op, v[j], partial[g * cols + j]);
  for (auto& x : v)
    x = cpu::finalize(op, x, static_cast<double>(rows));
  return v;
}

template <class T>
class CpuReduce : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuReduce, Types);

TYPED_TEST(CpuReduce, EveryOpAndAxisIsBitIdenticalToTheReferenceForAnyThreadCount) {
  using T = TypeParam;
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const int saved = omp_get_max_threads();
  for (const auto& s : kShapes) {
    const auto a = random_matrix<T>(static_cast<std::size_t>(s.rows * s.cols), rng);
    for (Op op : kOps)
      for (Axis axis : kAxes) {
        const auto expect = bits(reference::reduce(op, axis, a.data(), s.rows, s.cols));
        for (int threads : {1, 2, 3}) {
          omp_set_num_threads(threads);
          EXPECT_EQ(bits(kernel_reduce(op, axis, a.data(), s.rows, s.cols)), expect)
              << op_name(op) << " over " << axis_name(axis) << " of " << s.rows << "x" << s.cols
              << ", " << threads << " threads, seed " << seed;
        }
      }
  }
  omp_set_num_threads(saved);
}

TYPED_TEST(CpuReduce, FoldRowsContinuesAColumnFoldAcrossAnySplit) {
  using T = TypeParam;
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const std::int64_t rows = 200, cols = 16411; // 4 groups, the last one short; > 1 column tile
  const auto a = random_matrix<T>(static_cast<std::size_t>(rows * cols), rng);
  for (Op op : kOps) {
    std::vector<double> groups(static_cast<std::size_t>(4 * cols));
    cpu::reduce_col_groups(op, a.data(), rows, cols, groups.data());
    // A rank boundary at row 100 cuts group 1 (rows 64..127): fold it in two pieces.
    std::vector<double> acc(static_cast<std::size_t>(cols), cpu::identity(op));
    cpu::fold_rows(op, a.data() + 64 * cols, 36, cols, acc.data());
    cpu::fold_rows(op, a.data() + 100 * cols, 28, cols, acc.data());
    EXPECT_EQ(bits(acc), bits({groups.begin() + cols, groups.begin() + 2 * cols}))
        << op_name(op) << ", seed " << seed;
  }
}

// The column fold walks rows eight at a time; pieces of every length around that step, with
// the short row sweeps at their ends, must continue the fold exactly.
TYPED_TEST(CpuReduce, FoldRowsInPiecesOfAnyLengthMatchesTheWholeGroup) {
  using T = TypeParam;
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const std::int64_t rows = 64, cols = 999;
  const auto a = random_matrix<T>(static_cast<std::size_t>(rows * cols), rng);
  const std::int64_t pieces[] = {1, 7, 8, 9, 15, 16, 2, 6}; // sums to 64
  for (Op op : kOps) {
    std::vector<double> group(static_cast<std::size_t>(cols));
    cpu::reduce_col_groups(op, a.data(), rows, cols, group.data());
    std::vector<double> acc(static_cast<std::size_t>(cols), cpu::identity(op));
    std::int64_t i = 0;
    for (std::int64_t n : pieces) {
      cpu::fold_rows(op, a.data() + i * cols, n, cols, acc.data());
      i += n;
    }
    ASSERT_EQ(i, rows);
    EXPECT_EQ(bits(acc), bits(group)) << op_name(op) << ", seed " << seed;
  }
}

TEST(CpuReduceScalars, IdentityCombineAndFinalize) {
  EXPECT_EQ(cpu::identity(Op::Sum), 0.0);
  EXPECT_EQ(cpu::identity(Op::Min), INFINITY);
  EXPECT_EQ(cpu::identity(Op::Max), -INFINITY);
  EXPECT_EQ(cpu::identity(Op::NormInf), 0.0);
  EXPECT_EQ(cpu::combine(Op::Norm2, 1.5, 2.0), 3.5);
  EXPECT_EQ(cpu::combine(Op::Min, 1.5, -2.0), -2.0);
  EXPECT_EQ(cpu::combine(Op::Max, 1.5, -2.0), 1.5);
  EXPECT_TRUE(std::isnan(cpu::combine(Op::Min, NAN, 1.0)));
  EXPECT_TRUE(std::isnan(cpu::combine(Op::Max, 1.0, NAN)));
  EXPECT_EQ(cpu::finalize(Op::Mean, 6.0, 4.0), 1.5);
  EXPECT_EQ(cpu::finalize(Op::Norm2, 9.0, 4.0), 3.0);
  EXPECT_EQ(cpu::finalize(Op::Sum, 9.0, 4.0), 9.0);
}

TEST(CpuReduceNaN, MinAndMaxPropagateNaNWhereverItIs) {
  for (std::int64_t where : {0, 5, 199}) {
    std::vector<double> a(200, 1.0);
    a[where] = NAN;
    for (Op op : {Op::Min, Op::Max, Op::Sum}) {
      double r = 0.0;
      cpu::reduce_rows(op, a.data(), 1, 200, &r);
      EXPECT_TRUE(std::isnan(r)) << op_name(op) << " with NaN at " << where;
    }
  }
}

} // namespace
