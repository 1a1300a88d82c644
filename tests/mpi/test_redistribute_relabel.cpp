// RedistributePlan with relabel: a target differing from the source by a permutation of ranks
// moves nothing and lands where target() says; on random layout pairs the result is the serial
// reference's under the relabelled layout, and no more is sent in all than without relabelling.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include <tessera/error.hpp>
#include <tessera/layout.hpp>
#include <tessera/redistribute_plan.hpp>

#include "redistribute_random.hpp"
#include "redistribute_reference.hpp"

namespace {

using tessera::BlockCyclicSpec;
using tessera::DType;
using tessera::Layout;
using tessera::MatrixOp;
using tessera::RedistributeOptions;
using tessera::RedistributePlan;
using tessera::Shape;
using tessera::test::comm_rank;
using tessera::test::comm_size;
using tessera::test::local_block;
using tessera::test::pick;
using tessera::test::random_layout;

std::int64_t sum_over_ranks(std::int64_t x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return x;
}

// Executes a relabelling plan and compares with the reference under plan.target(); returns the
// bytes this rank sent.
template <class T>
std::int64_t check_relabelled(const Layout& a, const Layout& b, RedistributeOptions o) {
  const int rank = comm_rank();
  o.relabel = true;
  RedistributePlan plan(a, b, tessera::dtype_of<T>, MPI_COMM_WORLD, o);
  const Layout& target = plan.target();
  // target is b with owner r replaced by relabelling()[r], block by block.
  const auto& sigma = plan.relabelling();
  std::vector<int> sorted = sigma;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> identity(sorted.size());
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity) << "not a permutation";
  EXPECT_EQ(target.row_splits(), b.row_splits());
  EXPECT_EQ(target.col_splits(), b.col_splits());
  for (std::int64_t bi = 0; bi < b.block_rows(); ++bi)
    for (std::int64_t bj = 0; bj < b.block_cols(); ++bj)
      EXPECT_EQ(target.block_owner(bi, bj), sigma[static_cast<std::size_t>(b.block_owner(bi, bj))]);
  o.rows = b.global().rows;
  o.cols = b.global().cols;
  const auto a_local = local_block<T>(a, rank, 1);
  std::vector<T> expected(static_cast<std::size_t>(target.local_extent(rank)), T{-7});
  auto got = expected;
  tessera::test::redistribute_reference(a, target, o, a_local.data(), expected.data(),
                                        MPI_COMM_WORLD);
  plan.execute(a_local.empty() ? nullptr : a_local.data(), got.empty() ? nullptr : got.data());
  EXPECT_EQ(got, expected);
  const auto& t = plan.traffic();
  EXPECT_EQ(t.sent, t.sent_lower_bound);
  EXPECT_EQ(sum_over_ranks(t.received + t.kept),
            o.rows * o.cols * static_cast<std::int64_t>(sizeof(T)));
  return t.sent;
}

// Layouts equal up to a renumbering of ranks: the relabelling undoes it and nothing travels.
TEST(RedistributeRelabel, PermutedRanksMoveNothing) {
  const int p = comm_size();
  std::mt19937_64 g(41);
  for (int c = 0; c < 12; ++c) {
    SCOPED_TRACE(testing::Message() << "case " << c);
    const Shape s{pick(g, 1, 60), pick(g, 1, 60)};
    std::vector<int> perm(static_cast<std::size_t>(p));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), g);
    if (p > 1 && c == 0) // at least one case is certainly not the identity
      std::rotate(perm.begin(), perm.begin() + 1, perm.end());
    Layout a, b;
    if (c % 2 == 0) { // block-cyclic, the grid's ranks renumbered
      BlockCyclicSpec spec;
      spec.global = s;
      spec.mb = pick(g, 1, 9);
      spec.nb = pick(g, 1, 9);
      spec.pr = c % 4 == 0 && p == 4 ? 2 : 1;
      spec.pc = p / spec.pr;
      spec.nranks = p;
      a = Layout::block_cyclic(spec);
      spec.grid_ranks.resize(static_cast<std::size_t>(p));
      for (int k = 0; k < p; ++k) // position k held rank k in a; it holds perm[k] in b
        spec.grid_ranks[static_cast<std::size_t>(k)] = perm[static_cast<std::size_t>(k)];
      b = Layout::block_cyclic(spec);
    } else { // a general grid, its owners renumbered
      a = random_layout(g, s, p);
      std::vector<int> owners;
      for (std::int64_t bi = 0; bi < a.block_rows(); ++bi)
        for (std::int64_t bj = 0; bj < a.block_cols(); ++bj)
          owners.push_back(perm[static_cast<std::size_t>(a.block_owner(bi, bj))]);
      b = Layout::grid(a.row_splits(), a.col_splits(), owners, p, a.storage());
    }
    const std::int64_t sent = check_relabelled<double>(a, b, {});
    EXPECT_EQ(sent, 0);
    // Every block is back with its owner in a.
    RedistributeOptions relabel;
    relabel.relabel = true;
    const RedistributePlan plan(a, b, DType::f64, MPI_COMM_WORLD, relabel);
    for (std::int64_t i = 0; i < s.rows; i += 5)
      for (std::int64_t j = 0; j < s.cols; j += 3)
        EXPECT_EQ(plan.target().owner(i, j), a.owner(i, j));
  }
}

// Random pairs, every op: the reference under the relabelled layout, and never more bytes sent
// in all than the same plan without relabelling.
TEST(RedistributeRelabel, RandomLayoutsNeverSendMore) {
  const int p = comm_size();
  std::mt19937_64 g(42);
  int fewer = 0;
  for (int c = 0; c < 30; ++c) {
    SCOPED_TRACE(testing::Message() << "case " << c);
    const Shape a_shape{pick(g, 1, 50), pick(g, 1, 50)};
    RedistributeOptions o;
    o.op = static_cast<MatrixOp>(pick(g, 0, 2));
    o.alpha = {pick(g, 1, 3) * 0.5, 0.0};
    const Shape b_shape = o.op == MatrixOp::None ? a_shape : a_shape.transposed();
    const Layout a = random_layout(g, a_shape, p);
    const Layout b = random_layout(g, b_shape, p);
    const std::int64_t sent = sum_over_ranks(
        c % 2 ? check_relabelled<double>(a, b, o)
              : check_relabelled<std::complex<double>>(a, b, o) / 2); // per 8 bytes, as f64
    const RedistributePlan plain(a, b, DType::f64, MPI_COMM_WORLD, o);
    const std::int64_t plain_sent = sum_over_ranks(plain.traffic().sent);
    EXPECT_LE(sent, plain_sent);
    fewer += sent < plain_sent;
  }
  if (p > 1) { // relabelling did something in some cases
    EXPECT_GT(fewer, 0);
  }
}

TEST(RedistributeRelabel, RejectsPartsOfBAndBeta) {
  const int p = comm_size();
  const Layout a = Layout::row_blocks({6, 6}, p);
  RedistributeOptions o;
  o.relabel = true;
  o.rows = 3;
  o.cols = 6;
  EXPECT_THROW(RedistributePlan(a, a, DType::f64, MPI_COMM_WORLD, o), tessera::InputError);
  o.rows = o.cols = -1;
  o.beta = 1.0;
  EXPECT_THROW(RedistributePlan(a, a, DType::f64, MPI_COMM_WORLD, o), tessera::InputError);
  o.beta = 0.0;
  RedistributePlan plan(a, a, DType::f64, MPI_COMM_WORLD, o);
  std::vector<double> x(36), y(36);
  EXPECT_THROW(plan.execute(x.data(), y.data(), 1.0, 2.0), tessera::InputError);
}

} // namespace
