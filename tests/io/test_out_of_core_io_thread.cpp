// IoThread with MPI: its communicator is a duplicate (messages never match the caller's),
// requests run in the same order on every rank so collective calls inside them line up, and
// a pinning failure on one rank can be agreed on without leaving other ranks behind.
#include <gtest/gtest.h>
#include <mpi.h>

#include <future>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "io/io_thread.hpp"
#include "mpi/agreement.hpp"

using namespace tessera;
using tessera::io::IoThread;

namespace {
int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}
} // namespace

TEST(IoThreadMpi, OwnsADuplicateOfTheCommunicator) {
  IoThread io(MPI_COMM_WORLD);
  int cmp = MPI_UNEQUAL;
  MPI_Comm_compare(io.comm(), MPI_COMM_WORLD, &cmp);
  EXPECT_EQ(cmp, MPI_CONGRUENT);
  EXPECT_EQ(io.rank(), world_rank());
  EXPECT_EQ(io.size(), world_size());
}

// Collective calls on the I/O thread and on the calling thread at the same time, on their
// own communicators: every request's allreduce meets the same request on the other ranks.
TEST(IoThreadMpi, CollectiveRequestsLineUpAcrossRanksWhileComputeCommunicates) {
  unsigned seed = std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  const int n = 50 + static_cast<int>(seed % 100);
  SCOPED_TRACE(testing::Message() << "seed " << seed << ", " << n << " requests");
  IoThread io(MPI_COMM_WORLD);
  const int p = world_size(), r = world_rank();
  std::vector<std::future<long>> sums;
  for (int i = 0; i < n; ++i)
    sums.push_back(io.submit([&io, i, r] {
      long mine = 1000L * i + r, total = 0;
      MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, io.comm());
      return total;
    }));
  // Meanwhile, compute talks on the caller's communicator.
  for (int i = 0; i < n; ++i) {
    long mine = i, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(total, static_cast<long>(i) * p);
  }
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(sums[i].get(), 1000L * i * p + static_cast<long>(p) * (p - 1) / 2) << "request " << i;
}

TEST(IoThreadMpi, APinningFailureOnOneRankIsAgreedOn) {
  // The last rank asks for a CPU that cannot exist; the others for none.
  const int cpu = world_rank() == world_size() - 1 ? 1 << 20 : -1;
  std::unique_ptr<IoThread> io;
  try {
    mpi::collectively(MPI_COMM_WORLD, [&] {
      io = std::make_unique<IoThread>(MPI_COMM_WORLD, io::IoThreadOptions{cpu});
    });
    ADD_FAILURE() << "no rank reported the bad CPU";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("io_cpu"), std::string::npos) << e.what();
  }
  // Every rank is still in step: a collective call works.
  int one = 1, all = 0;
  MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(all, world_size());
}

TEST(IoThreadMpi, RequiresMultipleThreadSupportAndSaysWhy) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  ASSERT_EQ(provided, MPI_THREAD_MULTIPLE) << "the test main initialises MPI_THREAD_MULTIPLE";
  EXPECT_STREQ(io::mpi_thread_level_name(MPI_THREAD_FUNNELED), "MPI_THREAD_FUNNELED");
  EXPECT_NO_THROW(IoThread(MPI_COMM_WORLD));
}
