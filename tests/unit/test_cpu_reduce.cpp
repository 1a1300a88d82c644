// The OpenMP reduction kernels, assembled into whole results in the canonical order, against
// the serial reference: every op and axis, f32 and f64, 1-3 threads, compared bit for bit. The
// Norm2 rescue: the reference against accurate norms near overflow and underflow, and the
// rescue's kernels assembled as the plan does against the reference, bit for bit.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../norm2_test_support.hpp"
#include "core/error.hpp"
#include "cpu/reduce.hpp"
#include "cpu/reduce_kernels.hpp"
#include "cpu/reference.hpp"
#include "mpi/norm2_rescue.hpp"

using namespace tessera;

namespace {

constexpr Op kOps[] = {Op::Sum, Op::Min, Op::Max, Op::Mean, Op::Norm1, Op::Norm2, Op::NormInf};
constexpr Axis kAxes[] = {Axis::All, Axis::Rows, Axis::Cols};

struct Shape2 {
  std::int64_t rows, cols;
};
// 70 x 16411: more than one column tile; 40000 x 3: three super-blocks of row blocks, the last
// one partial.
const Shape2 kShapes[] = {{1, 1},     {1, 300},   {300, 1},   {17, 31},    {64, 128},
                          {65, 129},  {127, 257}, {131, 263}, {1000, 999}, {70, 16411},
                          {40000, 3}, {1100, 5},  {2047, 15}};

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
  std::vector<double> scratch;
  return cpu::reduce_whole(op, axis, a, rows, cols, scratch);
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
    std::vector<double> acc(static_cast<std::size_t>(cols), identity(op));
    cpu::fold_rows(op, a.data() + 64 * cols, 36, cols, acc.data());
    cpu::fold_rows(op, a.data() + 100 * cols, 28, cols, acc.data());
    EXPECT_EQ(bits(acc), bits({groups.begin() + cols, groups.begin() + 2 * cols}))
        << op_name(op) << ", seed " << seed;
  }
}

// Several ops in one read give each op's own row values to the bit, for rows far shorter than
// the cache block (many rows a block) and longer (a row a block), with NaN among the data.
TYPED_TEST(CpuReduce, RowsOfSeveralOpsInOneReadMatchEachOpAlone) {
  using T = TypeParam;
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  // The Sum family with compare ops, with Sum and Mean sharing one state, and compares only.
  const Op lists[][4] = {{Op::Sum, Op::Max, Op::Norm2, Op::Min},
                         {Op::NormInf, Op::Norm1, Op::Mean, Op::Sum},
                         {Op::Min, Op::NormInf, Op::Max, Op::Min},
                         {Op::Norm2, Op::Norm1, Op::Norm2, Op::Mean}};
  for (const Shape2 s : {Shape2{1, 1}, Shape2{333, 17}, Shape2{129, 4099}, Shape2{5, 70001}}) {
    auto a = random_matrix<T>(static_cast<std::size_t>(s.rows * s.cols), rng);
    a[static_cast<std::size_t>(rng() % a.size())] = std::numeric_limits<T>::quiet_NaN();
    for (const auto& ops : lists) {
      std::vector<std::vector<double>> got(4,
                                           std::vector<double>(static_cast<std::size_t>(s.rows)));
      double* out[4] = {got[0].data(), got[1].data(), got[2].data(), got[3].data()};
      cpu::reduce_rows_multi(ops, 4, a.data(), s.rows, s.cols, out);
      for (int k = 0; k < 4; ++k) {
        std::vector<double> want(static_cast<std::size_t>(s.rows));
        cpu::reduce_rows(ops[k], a.data(), s.rows, s.cols, want.data());
        EXPECT_EQ(bits(got[k]), bits(want))
            << op_name(ops[k]) << " on " << s.rows << " x " << s.cols << ", seed " << seed;
      }
    }
  }
}

// Column partials of several ops in one read give each op's own partials to the bit: groups
// with a short last one, row sweeps of eight and fewer, column pieces of every length around
// the widened width (256) and the column tile (16384), with NaN among the data.
TYPED_TEST(CpuReduce, ColumnGroupsOfSeveralOpsInOneReadMatchEachOpAlone) {
  using T = TypeParam;
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const Op lists[][4] = {{Op::Sum, Op::Max, Op::Norm2, Op::Min},
                         {Op::NormInf, Op::Norm1, Op::Mean, Op::Sum}};
  for (const Shape2 s :
       {Shape2{1, 1}, Shape2{133, 17}, Shape2{71, 257}, Shape2{3, 16387}, Shape2{1100, 5}}) {
    auto a = random_matrix<T>(static_cast<std::size_t>(s.rows * s.cols), rng);
    a[static_cast<std::size_t>(rng() % a.size())] = std::numeric_limits<T>::quiet_NaN();
    const auto groups = static_cast<std::size_t>((s.rows + 63) / 64 * s.cols);
    for (const auto& ops : lists) {
      std::vector<std::vector<double>> got(4, std::vector<double>(groups));
      double* out[4] = {got[0].data(), got[1].data(), got[2].data(), got[3].data()};
      cpu::reduce_col_groups_multi(ops, 4, a.data(), s.rows, s.cols, out);
      for (int k = 0; k < 4; ++k) {
        std::vector<double> want(groups);
        cpu::reduce_col_groups(ops[k], a.data(), s.rows, s.cols, want.data());
        EXPECT_EQ(bits(got[k]), bits(want))
            << op_name(ops[k]) << " on " << s.rows << " x " << s.cols << ", seed " << seed;
      }
    }
  }
}

// Every instruction set's build of the kernels the processor can run gives the portable build's
// bits (the tests above check the one in use against the reference): rows and column partials,
// one op and several, and a column fold continued, on shapes around the vector and tile widths.
TYPED_TEST(CpuReduce, EveryInstructionSetGivesThePortableBits) {
  using T = TypeParam;
  using cpu::detail::Isa;
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const auto& portable = cpu::detail::reduce_kernels(Isa::Portable).of<T>();
  const Op several[] = {Op::Sum, Op::Max, Op::Norm2, Op::Min, Op::NormInf, Op::Norm1};
  constexpr std::size_t kSeveral = std::size(several);
  int checked = 0;
  for (const Isa isa : {Isa::Avx2, Isa::Avx512}) {
    if (!cpu::detail::isa_supported(isa))
      continue;
    ++checked;
    const auto& built = cpu::detail::reduce_kernels(isa).of<T>();
    for (const Shape2 s : {Shape2{1, 1}, Shape2{67, 31}, Shape2{130, 1027}, Shape2{9, 16411}}) {
      auto a = random_matrix<T>(static_cast<std::size_t>(s.rows * s.cols), rng);
      a[static_cast<std::size_t>(rng() % a.size())] = std::numeric_limits<T>::quiet_NaN();
      const auto rows = static_cast<std::size_t>(s.rows);
      const auto groups = static_cast<std::size_t>((s.rows + 63) / 64 * s.cols);
      const auto cols = static_cast<std::size_t>(s.cols);
      const std::string where = " on " + std::to_string(s.rows) + " x " + std::to_string(s.cols) +
                                ", isa " + std::to_string(static_cast<int>(isa)) + ", seed " +
                                std::to_string(seed);
      for (Op op : kOps) {
        std::vector<double> want(rows), got(rows);
        portable.reduce_rows(op, a.data(), s.rows, s.cols, want.data());
        built.reduce_rows(op, a.data(), s.rows, s.cols, got.data());
        EXPECT_EQ(bits(got), bits(want)) << "rows of " << op_name(op) << where;
        want.assign(groups, 0.0);
        got.assign(groups, 0.0);
        portable.reduce_col_groups(op, a.data(), s.rows, s.cols, want.data());
        built.reduce_col_groups(op, a.data(), s.rows, s.cols, got.data());
        EXPECT_EQ(bits(got), bits(want)) << "column groups of " << op_name(op) << where;
        want.assign(cols, identity(op));
        got.assign(cols, identity(op));
        portable.fold_rows(op, a.data(), s.rows, s.cols, want.data());
        built.fold_rows(op, a.data(), s.rows, s.cols, got.data());
        EXPECT_EQ(bits(got), bits(want)) << "column fold of " << op_name(op) << where;
      }
      for (const bool along_rows : {true, false}) {
        const std::size_t each = along_rows ? rows : groups;
        std::vector<std::vector<double>> want(kSeveral, std::vector<double>(each));
        auto got = want;
        double* want_out[kSeveral];
        double* got_out[kSeveral];
        for (std::size_t k = 0; k < kSeveral; ++k) {
          want_out[k] = want[k].data();
          got_out[k] = got[k].data();
        }
        if (along_rows) {
          portable.reduce_rows_multi(several, kSeveral, a.data(), s.rows, s.cols, want_out);
          built.reduce_rows_multi(several, kSeveral, a.data(), s.rows, s.cols, got_out);
        } else {
          portable.reduce_col_groups_multi(several, kSeveral, a.data(), s.rows, s.cols, want_out);
          built.reduce_col_groups_multi(several, kSeveral, a.data(), s.rows, s.cols, got_out);
        }
        for (std::size_t k = 0; k < kSeveral; ++k)
          EXPECT_EQ(bits(got[k]), bits(want[k])) << (along_rows ? "rows" : "column groups")
                                                 << " of several, " << op_name(several[k]) << where;
      }
    }
  }
  if (checked == 0)
    GTEST_SKIP() << "this processor has neither AVX2 nor AVX-512F";
}

// Rows of every length (none included) around the short-row walk (fewer than 64 columns) and
// the full one, with signed zeros, infinities and NaN among the values: each op's row values,
// alone and several from one read, have the reference's bits.
TYPED_TEST(CpuReduce, RowsOfEveryShortLengthKeepTheReferenceBits) {
  using T = TypeParam;
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const T specials[] = {T(0), -T(0), std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN()};
  const std::vector<Op> ops(std::begin(kOps), std::end(kOps));
  for (std::int64_t cols = 0; cols <= 130; ++cols) {
    const std::int64_t rows = 9;
    auto a = random_matrix<T>(static_cast<std::size_t>(rows * cols), rng);
    for (std::int64_t i = 0; i < rows; ++i) // row i: 0, 1, 2… specials spread over it
      for (std::int64_t k = 0; k < i && k < cols; ++k)
        a[static_cast<std::size_t>(i * cols + static_cast<std::int64_t>(rng() % cols))] =
            i % 2 == 0 ? specials[rng() % 2] : specials[rng() % std::size(specials)];
    std::vector<std::vector<double>> several(ops.size(), std::vector<double>(rows));
    std::vector<double*> out;
    for (auto& v : several)
      out.push_back(v.data());
    cpu::reduce_rows_multi(ops.data(), ops.size(), a.data(), rows, cols, out.data());
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const Op op = ops[k];
      std::vector<double> want = reference::reduce(op, Axis::Rows, a.data(), rows, cols);
      std::vector<double> got(static_cast<std::size_t>(rows));
      cpu::reduce_rows(op, a.data(), rows, cols, got.data());
      for (auto* v : {&got, &several[k]})
        for (auto& x : *v)
          x = finalize(op, x, static_cast<double>(cols));
      // NaN compares as NaN: +inf + -inf gives the processor's default NaN, whose sign differs
      // from a NaN of the data, and which of them a sum carries depends on the operand order.
      for (auto* v : {&got, &several[k], &want})
        for (auto& x : *v)
          if (std::isnan(x))
            x = std::numeric_limits<double>::quiet_NaN();
      EXPECT_EQ(bits(got), bits(want)) << op_name(op) << ", " << cols << " columns, seed " << seed;
      EXPECT_EQ(bits(several[k]), bits(want))
          << op_name(op) << " among several, " << cols << " columns, seed " << seed;
    }
  }
}

// The running fold of block partials (total, open) continued from any global block, in pieces
// that start, end or cross super-blocks, gives the whole fold's bits, and the whole fold is the
// two-level order of core/reduction.hpp written out.
TEST(CpuReduceFold, PartialsInPiecesMatchTheTwoLevelOrder) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const std::int64_t groups = 4 * kReduceSuperBlocks + 17, cols = 5;
  const auto p = random_matrix<double>(static_cast<std::size_t>(groups * cols), rng);
  const std::int64_t pieces[] = {1, kReduceSuperBlocks - 2, 2, 300, 7, kReduceSuperBlocks, 0, 1};
  for (Op op : kOps) {
    std::vector<double> want(static_cast<std::size_t>(cols));
    for (std::int64_t j = 0; j < cols; ++j) {
      double total = identity(op);
      for (std::int64_t s0 = 0; s0 < groups; s0 += kReduceSuperBlocks) {
        double q = identity(op);
        for (std::int64_t g = s0; g < std::min(groups, s0 + kReduceSuperBlocks); ++g)
          q = combine(op, q, p[g * cols + j]);
        total = combine(op, total, q);
      }
      want[j] = total;
    }
    std::vector<double> total(static_cast<std::size_t>(cols), identity(op)), open = total;
    std::int64_t g = 0;
    for (std::int64_t n : pieces) {
      cpu::fold_partials(op, total.data(), open.data(), g, p.data() + g * cols, n, cols);
      g += n;
    }
    cpu::fold_partials(op, total.data(), open.data(), g, p.data() + g * cols, groups - g, cols);
    cpu::close_partials(op, total.data(), open.data(), cols);
    EXPECT_EQ(bits(total), bits(want)) << op_name(op) << ", seed " << seed;
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
    std::vector<double> acc(static_cast<std::size_t>(cols), identity(op));
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
  EXPECT_EQ(identity(Op::Sum), 0.0);
  EXPECT_EQ(identity(Op::Min), INFINITY);
  EXPECT_EQ(identity(Op::Max), -INFINITY);
  EXPECT_EQ(identity(Op::NormInf), 0.0);
  EXPECT_EQ(combine(Op::Norm2, 1.5, 2.0), 3.5);
  EXPECT_EQ(combine(Op::Min, 1.5, -2.0), -2.0);
  EXPECT_EQ(combine(Op::Max, 1.5, -2.0), 1.5);
  EXPECT_TRUE(std::isnan(combine(Op::Min, NAN, 1.0)));
  EXPECT_TRUE(std::isnan(combine(Op::Max, 1.0, NAN)));
  EXPECT_EQ(finalize(Op::Mean, 6.0, 4.0), 1.5);
  EXPECT_EQ(finalize(Op::Norm2, 9.0, 4.0), 3.0);
  EXPECT_EQ(finalize(Op::Sum, 9.0, 4.0), 9.0);
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

TEST(CpuReduceNaN, ColumnGroupsOfNarrowMatricesPropagateNaNToTheirGroupOnly) {
  constexpr std::int64_t rows = 2100, cols = 3; // 32 whole groups and a short one
  const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  for (std::int64_t where : {std::int64_t{0}, std::int64_t{1000 * cols + 2}, rows * cols - 1}) {
    std::vector<float> a(static_cast<std::size_t>(rows * cols), 1.0F);
    a[static_cast<std::size_t>(where)] = NAN;
    for (Op op : {Op::Min, Op::Max, Op::NormInf}) {
      std::vector<double> out(static_cast<std::size_t>(groups * cols), 0.0);
      cpu::reduce_col_groups(op, a.data(), rows, cols, out.data());
      for (std::int64_t g = 0; g < groups; ++g)
        for (std::int64_t j = 0; j < cols; ++j) {
          const bool hit = g == where / cols / kReduceBlockRows && j == where % cols;
          EXPECT_EQ(std::isnan(out[static_cast<std::size_t>(g * cols + j)]), hit)
              << op_name(op) << " group " << g << " column " << j << ", NaN at " << where;
        }
    }
  }
}

// Norm2 along axis from the kernels, with the rescue of core/reduction.hpp assembled from the
// rescue's kernels the way the plan does on one rank.
std::vector<double> kernel_norm2(Axis axis, const double* a, std::int64_t rows, std::int64_t cols) {
  std::vector<double> v = kernel_reduce(Op::Norm2, axis, a, rows, cols);
  const std::vector<double> m = kernel_reduce(Op::NormInf, axis, a, rows, cols);
  std::vector<int> e(v.size(), 0);
  std::vector<bool> fix(v.size(), false);
  for (std::size_t k = 0; k < v.size(); ++k)
    if (const auto x = norm2_rescue_exponent(m[k]); x && norm2_needs_rescue(v[k])) {
      e[k] = *x;
      fix[k] = true;
    }
  std::vector<double> s(v.size(), 0.0);
  const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  if (axis == Axis::Cols) {
    for (std::int64_t g = 0; g < groups; ++g) {
      std::vector<double> p(static_cast<std::size_t>(cols), 0.0);
      const std::int64_t i0 = g * kReduceBlockRows;
      cpu::fold_rows_scaled(a + i0 * cols, std::min(kReduceBlockRows, rows - i0), cols, e.data(),
                            p.data());
      for (std::int64_t j = 0; j < cols; ++j)
        s[j] += p[j];
    }
  } else {
    std::vector<int> row_exp(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i)
      row_exp[i] = e[axis == Axis::Rows ? i : 0];
    std::vector<double> r(static_cast<std::size_t>(rows));
    cpu::reduce_rows_scaled(a, rows, cols, row_exp.data(), r.data());
    if (axis == Axis::Rows)
      s = r;
    for (std::int64_t g = 0; axis == Axis::All && g < groups; ++g) {
      double p = 0.0;
      for (std::int64_t i = g * kReduceBlockRows; i < std::min(rows, (g + 1) * kReduceBlockRows);
           ++i)
        p += r[i];
      s[0] += p;
    }
  }
  for (std::size_t k = 0; k < v.size(); ++k)
    if (fix[k])
      v[k] = norm2_unscale(std::sqrt(s[k]), e[k]);
  return v;
}

const Shape2 kExtremeShapes[] = {{1, 1}, {3, 5}, {130, 7}, {67, 300}, {200, 129}};

TEST(Norm2Rescue, ReferenceIsAccurateNearOverflowAndUnderflow) {
  for (const auto& c : test::extreme_cases())
    for (const auto& s : kExtremeShapes) {
      const auto a = test::extreme_matrix(c, s.rows, s.cols);
      for (Axis axis : kAxes) {
        const auto got = reference::reduce(Op::Norm2, axis, a.data(), s.rows, s.cols);
        const auto want = test::accurate_norms(axis, a.data(), s.rows, s.cols);
        ASSERT_EQ(got.size(), want.size());
        const std::int64_t n = test::vector_length(axis, s.rows, s.cols);
        for (std::size_t k = 0; k < got.size(); ++k)
          ASSERT_TRUE(test::close_norm(got[k], want[k], n))
              << c.name << ", " << s.rows << "x" << s.cols << " along " << axis_name(axis)
              << ": value " << k << " is " << got[k] << ", accurately " << want[k];
      }
    }
}

TEST(Norm2Rescue, RescueKernelsGiveTheReferenceBitsForAnyThreadCount) {
  const int saved = omp_get_max_threads();
  for (const auto& c : test::extreme_cases())
    for (const auto& s : {Shape2{1, 1}, Shape2{130, 7}, Shape2{200, 129}}) {
      const auto a = test::extreme_matrix(c, s.rows, s.cols);
      for (Axis axis : kAxes) {
        const auto expect = bits(reference::reduce(Op::Norm2, axis, a.data(), s.rows, s.cols));
        for (int threads : {1, 3}) {
          omp_set_num_threads(threads);
          EXPECT_EQ(bits(kernel_norm2(axis, a.data(), s.rows, s.cols)), expect)
              << c.name << ", " << s.rows << "x" << s.cols << " along " << axis_name(axis) << ", "
              << threads << " threads";
        }
      }
    }
  omp_set_num_threads(saved);
}

// A rank boundary or an out-of-core chunk may cut a 64-row group: the scaled fold continues.
TEST(Norm2Rescue, ScaledFoldInPiecesMatchesTheWholeFold) {
  const auto a = test::extreme_matrix(test::extreme_cases()[0], 64, 1500); // > 1 column tile
  std::vector<int> e(1500);
  for (std::size_t j = 0; j < e.size(); ++j)
    e[j] = -996 + static_cast<int>(j % 5);
  std::vector<double> whole(1500, 0.0), pieces(1500, 0.0);
  cpu::fold_rows_scaled(a.data(), 64, 1500, e.data(), whole.data());
  std::int64_t i = 0;
  for (std::int64_t n : {1, 7, 8, 9, 15, 16, 2, 6}) {
    cpu::fold_rows_scaled(a.data() + i * 1500, n, 1500, e.data(), pieces.data());
    i += n;
  }
  EXPECT_EQ(bits(pieces), bits(whole));
  EXPECT_TRUE(std::all_of(whole.begin(), whole.end(), [](double x) { return std::isfinite(x); }));
}

// The rescue engine reads blocks in pieces of rows (device blocks are copied to the host so):
// with pieces of 3 rows, its pieces give the rescue kernels' bits on the whole block.
TEST(Norm2Rescue, EngineInPiecesGivesTheKernelsBits) {
  const std::int64_t rows = 150, cols = 37;
  const auto a = test::extreme_matrix(test::extreme_cases().at(4), rows, cols); // up to 2^1019
  Norm2Exponents e;
  for (std::int64_t i = 0; i < rows; ++i)
    e.rows.push_back(-1020 + static_cast<int>(i % 3));
  for (std::int64_t j = 0; j < cols; ++j)
    e.cols.push_back(-1021 + static_cast<int>(j % 4));
  ScaledNorm2Engine pieces(Memory::Host, e, 3 * cols * sizeof(double) + 5);

  std::vector<double> want(100), got(100);
  cpu::reduce_rows_scaled(a.data() + 10 * cols, 100, cols, e.rows.data() + 10, want.data());
  pieces.set_first_row(10);
  pieces.reduce_rows(Op::Norm2, a.data() + 10 * cols, 100, cols, got.data());
  EXPECT_EQ(bits(got), bits(want)) << "reduce_rows";

  const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  want.assign(static_cast<std::size_t>(groups * cols), 0.0);
  got.assign(want.size(), -1.0);
  for (std::int64_t g = 0; g < groups; ++g)
    cpu::fold_rows_scaled(a.data() + g * kReduceBlockRows * cols,
                          std::min(kReduceBlockRows, rows - g * kReduceBlockRows), cols,
                          e.cols.data(), want.data() + g * cols);
  pieces.reduce_col_groups(Op::Norm2, a.data(), rows, cols, got.data());
  EXPECT_EQ(bits(got), bits(want)) << "reduce_col_groups";

  want.assign(static_cast<std::size_t>(cols), 1.5);
  got = want;
  cpu::fold_rows_scaled(a.data(), rows, cols, e.cols.data(), want.data());
  pieces.fold_rows(Op::Norm2, a.data(), rows, cols, got.data());
  EXPECT_EQ(bits(got), bits(want)) << "fold_rows";
  EXPECT_TRUE(std::all_of(want.begin(), want.end(), [](double x) { return std::isfinite(x); }));

  EXPECT_THROW(pieces.reduce_rows(Op::Sum, a.data(), 1, cols, got.data()), InternalError);
}

TEST(Norm2Rescue, ConditionsAndScale) {
  EXPECT_TRUE(norm2_needs_rescue(INFINITY));
  EXPECT_TRUE(norm2_needs_rescue(0.0));
  EXPECT_TRUE(norm2_needs_rescue(std::nextafter(0x1p-480, 0.0)));
  EXPECT_FALSE(norm2_needs_rescue(0x1p-480));
  EXPECT_FALSE(norm2_needs_rescue(1.0));
  EXPECT_FALSE(norm2_needs_rescue(DBL_MAX));
  EXPECT_FALSE(norm2_needs_rescue(NAN));
  EXPECT_FALSE(norm2_rescue_exponent(0.0));
  EXPECT_FALSE(norm2_rescue_exponent(INFINITY));
  EXPECT_FALSE(norm2_rescue_exponent(NAN));
  for (double m : {1e300, DBL_MAX, 1e-200, 1e-310, std::numeric_limits<double>::denorm_min()}) {
    const auto e = norm2_rescue_exponent(m);
    ASSERT_TRUE(e) << m;
    const double y = std::ldexp(m, *e);
    EXPECT_TRUE(y >= 1.0 && y < 2.0) << m << " scaled to " << y;
    EXPECT_EQ(norm2_unscale(y, *e), m);
  }
}

// f32 squares fit a double: the extremes of f32 need no rescue and are accurate as they are.
TEST(Norm2Rescue, F32ExtremesAreAccurateWithoutIt) {
  for (float x : {FLT_MAX, std::numeric_limits<float>::denorm_min(), 1e-30f}) {
    const std::vector<float> a(130 * 7, x);
    const std::vector<double> wide(a.begin(), a.end());
    for (Axis axis : kAxes) {
      const auto got = reference::reduce(Op::Norm2, axis, a.data(), 130, 7);
      const auto want = test::accurate_norms(axis, wide.data(), 130, 7);
      for (std::size_t k = 0; k < got.size(); ++k)
        EXPECT_TRUE(test::close_norm(got[k], want[k], test::vector_length(axis, 130, 7)))
            << x << " along " << axis_name(axis) << ": " << got[k] << " vs " << want[k];
      EXPECT_EQ(bits(kernel_reduce(Op::Norm2, axis, a.data(), 130, 7)), bits(got));
    }
  }
}

} // namespace
