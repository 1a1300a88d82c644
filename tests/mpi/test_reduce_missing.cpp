// Reductions that skip missing values (ReduceOptions::missing) against the serial reference:
// the reference over the matrix with each missing element replaced by the op's identity (the
// canonical order over the valid elements), Count as the reference Sum of ones and zeros, Mean
// divided by it, Min and Max of nothing NaN. Bit for bit at 1 to 4 ranks, so rank-count
// independent; also for packed data (scale_factor, add_offset) and with IEEE NaN kept.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cpu/reference.hpp"
#include "mpi/reduce_plan.hpp"

namespace {

using tessera::Axis;
using tessera::BlockDistribution;
using tessera::MissingValues;
using tessera::Op;
using tessera::ReduceOptions;
using tessera::ReducePlan;
using tessera::Shape;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

int world(int (*f)(MPI_Comm, int*)) {
  int v = 0;
  f(MPI_COMM_WORLD, &v);
  return v;
}

// Random data with NaN, -999 (a fill value) and 1e20 (a missing_value), a row and a column
// without any valid element where the shape allows.
template <class T>
std::vector<T> data(Shape s, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> e(-20, 20), pick(0, 9);
  std::vector<T> a(static_cast<std::size_t>(s.size()));
  for (std::int64_t i = 0; i < s.rows; ++i)
    for (std::int64_t j = 0; j < s.cols; ++j) {
      const int p = pick(gen);
      double x = std::ldexp(u(gen), e(gen));
      if (p == 0)
        x = kNaN;
      else if (p == 1)
        x = -999.0;
      else if (p == 2)
        x = 1e20;
      if ((s.rows > 2 && i == 1) || (s.cols > 2 && j == 2))
        x = -999.0;
      a[static_cast<std::size_t>(i * s.cols + j)] = static_cast<T>(x);
    }
  return a;
}

bool missing(double x, const MissingValues& m) {
  if (x != x)
    return m.skip_nan;
  if (x < m.valid_min || x > m.valid_max)
    return true;
  for (double v : m.values)
    if (x == v)
      return true;
  return false;
}

// The expected values of op: the reference on the substituted (and decoded) matrix.
template <class T>
std::vector<double> expected(Op op, Axis axis, const std::vector<T>& a, Shape s,
                             const MissingValues& m) {
  const auto with = [&](double sub, bool ones) {
    std::vector<T> b(a.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      const double x = static_cast<double>(a[k]);
      b[k] = missing(x, m) ? static_cast<T>(sub)
             : ones        ? T{1}
                           : static_cast<T>(x * m.scale_factor + m.add_offset);
    }
    return b;
  };
  const std::vector<T> ones = with(0.0, true);
  std::vector<double> count =
      tessera::reference::reduce(Op::Sum, axis, ones.data(), s.rows, s.cols);
  if (op == Op::Count)
    return count;
  const double sub = op == Op::Min ? kInf : op == Op::Max ? -kInf : 0.0;
  const std::vector<T> b = with(sub, false);
  std::vector<double> v =
      tessera::reference::reduce(op == Op::Mean ? Op::Sum : op, axis, b.data(), s.rows, s.cols);
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (op == Op::Mean)
      v[k] /= count[k];
    else if ((op == Op::Min || op == Op::Max) && count[k] == 0.0)
      v[k] = kNaN;
  }
  return v;
}

template <class T>
void check_on(const std::vector<T>& a, Shape s, const MissingValues& m, unsigned seed) {
  const int rank = world(MPI_Comm_rank), nranks = world(MPI_Comm_size);
  const BlockDistribution dist(s, nranks);
  const std::vector<Op> ops = {Op::Sum,   Op::Min,   Op::Max,     Op::Mean,
                               Op::Norm1, Op::Norm2, Op::NormInf, Op::Count};
  for (Axis axis : {Axis::All, Axis::Rows, Axis::Cols}) {
    ReduceOptions o;
    o.missing = m;
    ReducePlan plan(dist, tessera::dtype_of<T>, MPI_COMM_WORLD, tessera::Backend::Cpu, ops, axis,
                    o);
    const T* mine = a.data() + dist.begin(rank) * s.cols;
    const tessera::ReduceResult r = plan.execute(mine);
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const std::vector<double> want = expected(ops[k], axis, a, s, m);
      ASSERT_EQ(r.values[k].size(), want.size());
      for (std::size_t i = 0; i < want.size(); ++i)
        ASSERT_TRUE(std::memcmp(&r.values[k][i], &want[i], sizeof(double)) == 0 ||
                    (std::isnan(r.values[k][i]) && std::isnan(want[i])))
            << tessera::op_name(ops[k]) << " along " << tessera::axis_name(axis) << " of "
            << s.str() << ", value " << i << ": " << r.values[k][i] << ", expected " << want[i]
            << " (seed " << seed << ")";
    }
  }
}

template <class T>
void check(Shape s, const MissingValues& m, unsigned seed) {
  check_on(data<T>(s, seed), s, m, seed);
}

unsigned seed() {
  unsigned v = world(MPI_Comm_rank) == 0 ? std::random_device{}() : 0u;
  MPI_Bcast(&v, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  return v;
}

const Shape kShapes[] = {{1, 1}, {7, 1}, {1, 9}, {5, 3}, {130, 17}, {300, 4}};

TEST(ReduceMissing, SkipsFillValuesAndNaN) {
  const MissingValues m{.skip_nan = true, .values = {-999.0, 1e20}};
  for (Shape s : kShapes) {
    check<double>(s, m, seed());
    check<float>(s, m, seed());
  }
}

TEST(ReduceMissing, KeepNaNSkipsFillValuesOnly) {
  const MissingValues m{.skip_nan = false, .values = {-999.0}};
  for (Shape s : kShapes)
    check<double>(s, m, seed());
}

TEST(ReduceMissing, PackedDataIsDecoded) {
  const MissingValues m{
      .skip_nan = true, .values = {-999.0}, .scale_factor = 0.01, .add_offset = 273.15};
  for (Shape s : kShapes)
    check<double>(s, m, seed());
}

TEST(ReduceMissing, ValuesOutsideTheValidRangeAreMissing) {
  // Elements are ldexp(u, e) with |u| < 1 and e in [-20, 20]: a range of [-8, 16] cuts some.
  const MissingValues m{.skip_nan = true, .values = {-999.0}, .valid_min = -8.0, .valid_max = 16.0};
  for (Shape s : kShapes) {
    check<double>(s, m, seed());
    check<float>(s, m, seed());
  }
  const MissingValues above{.skip_nan = true, .values = {}, .valid_min = 0.5};
  for (Shape s : kShapes)
    check<double>(s, above, seed());
}

TEST(ReduceMissing, CountWithoutMissingValuesIsTheSize) {
  for (Shape s : kShapes)
    check<double>(s, MissingValues{}, seed());
}

// Matrices of several MiB, checked and reduced a few rows at a time while they are in the cache
// (mpi/reduce_masked.hpp, cache_pieces): stretches with and without missing elements side by
// side, a row longer than a stretch, and no listed values (the branch-free test).
TEST(ReduceMissing, LargeMatricesWithMissingValuesInSomeRowsOnly) {
  const unsigned s0 = seed();
  const Shape shapes[] = {{300, 900}, {2, 140001}};
  for (Shape s : shapes) {
    std::mt19937_64 gen(s0);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> a(static_cast<std::size_t>(s.size()));
    for (double& x : a)
      x = u(gen);
    // A NaN in the second row and one near the end; 2.0 is outside a valid range of [-1, 1].
    a[static_cast<std::size_t>(s.cols + 5)] = kNaN;
    a[a.size() - 7] = kNaN;
    a[a.size() / 2] = 2.0;
    MissingValues nan, range, listed;
    nan.skip_nan = true;
    range.valid_max = 1.0;
    listed.skip_nan = true;
    listed.values = {2.0};
    for (const MissingValues& m : {nan, range, listed})
      check_on(a, s, m, s0);
    check_on(std::vector<float>(a.begin(), a.end()), s, nan, s0);
  }
}

} // namespace
