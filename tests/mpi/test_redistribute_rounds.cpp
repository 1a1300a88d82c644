// RedistributePlan's buffer bound (RedistributeOptions::max_buffer_bytes): on random layout pairs,
// plans limited to one local block, to a random part of one and to nothing at all (the floor of
// one element per peer, so as many rounds as the longest message has elements) give the bits the
// one-round plan gives, and hold no more buffer than the bound allows; every rank agrees on the
// rounds; a rank that holds nothing holds no buffer.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <tessera/error.hpp>
#include <tessera/layout.hpp>
#include <tessera/redistribute_plan.hpp>

#include "redistribute_random.hpp"
#include "redistribute_reference.hpp"

namespace {

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

// A limit no exchange reaches: one round.
constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max() / 4;

std::int64_t held_elements(const Layout& l, int rank) {
  const Shape s = l.local_shape(rank);
  return s.rows * s.cols;
}

template <class T>
std::vector<T> run(const RedistributePlan& plan, const std::vector<T>& a, std::vector<T> b) {
  const_cast<RedistributePlan&>(plan).execute(a.empty() ? nullptr : a.data(),
                                              b.empty() ? nullptr : b.data());
  return b;
}

// One layout pair under the given limit (0: the default), against the one-round plan bit for
// bit and against the reference; returns the rounds.
template <class T>
std::int64_t check_limit(const Layout& a, const Layout& b, RedistributeOptions o,
                         std::int64_t limit) {
  const int rank = comm_rank(), p = comm_size();
  const auto element = static_cast<std::int64_t>(sizeof(T));
  o.max_buffer_bytes = kUnlimited;
  const RedistributePlan whole(a, b, tessera::dtype_of<T>, MPI_COMM_WORLD, o);
  o.max_buffer_bytes = limit;
  const RedistributePlan split(a, b, tessera::dtype_of<T>, MPI_COMM_WORLD, o);
  EXPECT_EQ(whole.traffic().rounds, 1);
  const auto a_local = local_block<T>(a, rank, 1);
  const auto b_start = local_block<T>(b, rank, 2);
  const auto want = run(whole, a_local, b_start);
  const auto got = run(split, a_local, b_start);
  EXPECT_TRUE(got.size() == want.size() &&
              (got.empty() || std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0))
      << "limit " << limit << ", " << split.traffic().rounds << " rounds";
  if (o.rows < 0 || o.cols < 0) {
    o.rows = b.global().rows - o.b_row;
    o.cols = b.global().cols - o.b_col;
  }
  auto expected = b_start;
  tessera::test::redistribute_reference(a, b, o, a_local.data(), expected.data(), MPI_COMM_WORLD);
  EXPECT_EQ(got, expected);

  const auto& t = split.traffic();
  const std::int64_t bound =
      limit > 0 ? limit : std::max(held_elements(a, rank), held_elements(b, rank)) * element;
  // The floor: one element per peer, each way.
  EXPECT_LE(t.buffer_bytes, std::max(bound, 2 * (p - 1) * element)) << "limit " << limit;
  EXPECT_LE(t.buffer_bytes, whole.traffic().buffer_bytes);
  EXPECT_EQ(t.sent, whole.traffic().sent);
  EXPECT_EQ(t.received, whole.traffic().received);
  if (t.sent == 0 && t.received == 0) {
    EXPECT_EQ(t.buffer_bytes, 0);
  }
  std::int64_t least = t.rounds, most = t.rounds;
  MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(least, most) << "ranks disagree on the rounds";
  // The default keeps one round wherever it fits on every rank.
  if (limit == 0) {
    int fits = whole.traffic().buffer_bytes <= bound ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (fits) {
      EXPECT_EQ(t.rounds, 1);
    }
  }
  return t.rounds;
}

template <class T>
void random_limits(unsigned seed, int count) {
  const int p = comm_size();
  std::mt19937_64 g(seed);
  for (int c = 0; c < count; ++c) {
    const Shape a_shape{pick(g, 1, 40), pick(g, 1, 40)};
    const auto op = static_cast<MatrixOp>(pick(g, 0, 2));
    const Shape b_shape = op == MatrixOp::None ? a_shape : a_shape.transposed();
    const Layout a = random_layout(g, a_shape, p);
    const Layout b = random_layout(g, b_shape, p);
    RedistributeOptions o;
    o.op = op;
    o.alpha = pick(g, 0, 1) ? 1.0 : -0.5;
    o.beta = pick(g, 0, 1) ? 0.0 : 2.0;
    // A sub-matrix now and then: windows cut pieces at other places.
    if (pick(g, 0, 2) == 0) {
      o.rows = pick(g, 0, b_shape.rows);
      o.cols = pick(g, 0, b_shape.cols);
      o.b_row = pick(g, 0, b_shape.rows - o.rows);
      o.b_col = pick(g, 0, b_shape.cols - o.cols);
      const bool t = op != MatrixOp::None;
      o.a_row = pick(g, 0, a_shape.rows - (t ? o.cols : o.rows));
      o.a_col = pick(g, 0, a_shape.cols - (t ? o.rows : o.cols));
    }
    // The same limit on every rank or each its own: the rounds are agreed either way.
    const std::int64_t per_rank = pick(g, 0, 1) ? comm_rank() : 0;
    const std::int64_t limits[] = {0, pick(g, 1, 400) + per_rank * 8, 1};
    for (std::int64_t limit : limits) {
      SCOPED_TRACE(testing::Message() << "case " << c << " seed " << seed << " limit " << limit);
      check_limit<T>(a, b, o, limit);
    }
  }
}

TEST(RedistributeRounds, RandomLayoutsF64) {
  random_limits<double>(21, 40);
}
TEST(RedistributeRounds, RandomLayoutsF32) {
  random_limits<float>(22, 15);
}
TEST(RedistributeRounds, RandomLayoutsC128) {
  random_limits<std::complex<double>>(23, 15);
}

// Row blocks to their transpose: all to all, so the default needs two rounds from three ranks
// up (each rank sends and receives about (P-1)/P of a block); one byte asks for the floor.
TEST(RedistributeRounds, TransposeGoesInRounds) {
  const int p = comm_size();
  const Shape s{37, 23};
  const Layout a = Layout::row_blocks(s, p);
  const Layout b = Layout::row_blocks(s.transposed(), p, StorageOrder::ColMajor);
  RedistributeOptions o;
  o.op = MatrixOp::Transpose;
  const std::int64_t by_default = check_limit<double>(a, b, o, 0);
  const std::int64_t least = check_limit<double>(a, b, o, 1);
  if (p >= 3) {
    EXPECT_GE(by_default, 2);
  }
  if (p >= 2) {
    EXPECT_GT(least, by_default);
  }
  check_limit<double>(a, b, o, 3 * 8 + 5); // cuts inside lines
}

// Ranks beyond a 1 × 2 grid hold nothing and need no buffer, whatever the limit.
TEST(RedistributeRounds, EmptyRanksHoldNoBuffer) {
  const int p = comm_size(), rank = comm_rank();
  const Shape s{19, 11};
  const Layout a =
      Layout::blocks_2d(s, 1, std::min(p, 2), GridOrder::RowMajor, StorageOrder::RowMajor, p);
  const Layout b =
      Layout::blocks_2d(s, std::min(p, 2), 1, GridOrder::RowMajor, StorageOrder::ColMajor, p);
  for (std::int64_t limit : {0, 1, 40}) {
    check_limit<float>(a, b, {}, limit);
    RedistributeOptions o;
    o.max_buffer_bytes = limit;
    const RedistributePlan plan(a, b, DType::f32, MPI_COMM_WORLD, o);
    if (rank >= 2) {
      EXPECT_EQ(plan.traffic().buffer_bytes, 0);
    }
  }
}

TEST(RedistributeRounds, RejectsNegativeLimit) {
  const Layout a = Layout::row_blocks({4, 4}, comm_size());
  RedistributeOptions o;
  o.max_buffer_bytes = comm_rank() == 0 ? -1 : 0; // one rank wrong: every rank raises
  EXPECT_THROW(RedistributePlan(a, a, DType::f64, MPI_COMM_WORLD, o), tessera::InputError);
}

} // namespace
