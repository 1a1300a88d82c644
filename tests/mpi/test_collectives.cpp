// mpi/collectives.hpp: broadcasts, reductions over ranks, gathers and the token ring, at every
// rank count (empty contributions included).
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "../mpi_test_support.hpp"
#include "mpi/collectives.hpp"

namespace tessera::mpi {
namespace {

using test::rank_of;
using test::size_of;

TEST(Collectives, BroadcastGivesRankZerosValue) {
  const int rank = rank_of();
  std::string s = rank == 0 ? "from rank 0" : std::string(rank, 'x');
  long long n = rank == 0 ? (1LL << 40) + 3 : -rank;
  double d = rank == 0 ? 0.1 : 7.0 * rank;
  std::string empty = rank == 0 ? "" : "not empty";
  broadcast(MPI_COMM_WORLD, s);
  broadcast(MPI_COMM_WORLD, n);
  broadcast(MPI_COMM_WORLD, d);
  broadcast(MPI_COMM_WORLD, empty);
  EXPECT_EQ(s, "from rank 0");
  EXPECT_EQ(n, (1LL << 40) + 3);
  EXPECT_EQ(d, 0.1);
  EXPECT_EQ(empty, "");
}

TEST(Collectives, ReductionsOverRanks) {
  const int rank = rank_of(), size = size_of();
  EXPECT_EQ(sum_over_ranks(MPI_COMM_WORLD, rank + 1), size * (size + 1) / 2);
  EXPECT_EQ(sum_over_ranks(MPI_COMM_WORLD, 0.5), 0.5 * size);
  EXPECT_EQ(min_over_ranks(MPI_COMM_WORLD, std::int64_t{10} - rank), 10 - (size - 1));
  EXPECT_EQ(max_over_ranks(MPI_COMM_WORLD, std::uint64_t(rank) << 33), std::uint64_t(size - 1)
                                                                           << 33);
  EXPECT_TRUE(any_rank(MPI_COMM_WORLD, rank == size - 1));
  EXPECT_FALSE(any_rank(MPI_COMM_WORLD, false));
  EXPECT_TRUE(all_ranks(MPI_COMM_WORLD, true));
  EXPECT_FALSE(all_ranks(MPI_COMM_WORLD, rank != size - 1));
}

TEST(Collectives, AllgathervInRankOrder) {
  const int rank = rank_of(), size = size_of();
  // Rank r contributes r values (rank 0 none): r * 100 + k.
  std::vector<int> counts;
  for (int r = 0; r < size; ++r)
    counts.push_back(r);
  std::vector<double> mine;
  for (int k = 0; k < rank; ++k)
    mine.push_back(rank * 100.0 + k);
  const std::vector<double> all = allgatherv(MPI_COMM_WORLD, mine, counts);
  std::vector<double> want;
  for (int r = 0; r < size; ++r)
    for (int k = 0; k < r; ++k)
      want.push_back(r * 100.0 + k);
  EXPECT_EQ(all, want);
}

TEST(Collectives, AllgatherStringsOfAnyLength) {
  const int rank = rank_of(), size = size_of();
  const std::vector<std::string> all =
      allgather(MPI_COMM_WORLD, rank % 2 ? std::string() : std::string(rank + 1, 'a' + rank));
  ASSERT_EQ(static_cast<int>(all.size()), size);
  for (int r = 0; r < size; ++r)
    EXPECT_EQ(all[r], r % 2 ? std::string() : std::string(r + 1, 'a' + r)) << "rank " << r;
}

TEST(Collectives, TheTokenGoesRoundInRankOrder) {
  const int rank = rank_of();
  // Each rank adds itself: rank r receives 1000 + 0 + 1 + … + (r - 1).
  const int token = receive_token(MPI_COMM_WORLD, 7, 1000);
  EXPECT_EQ(token, 1000 + rank * (rank - 1) / 2);
  pass_token(MPI_COMM_WORLD, 7, token + rank);
  barrier(MPI_COMM_WORLD);
}

} // namespace
} // namespace tessera::mpi
