// Collective error agreement: when one rank fails, every rank throws an error of the same kind,
// marked collective, carrying the lowest failing rank's message; nobody hangs (ctest timeout).
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/throw.hpp"
#include "mpi/agreement.hpp"

namespace {

using tessera::mpi::collectively;

int rank_of(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int size_of(MPI_Comm c) {
  int s = 0;
  MPI_Comm_size(c, &s);
  return s;
}

// A rank chosen on rank 0 from a fresh random seed and shared, so every run tests a different
// failing rank but all ranks agree which one.
int random_rank(MPI_Comm comm) {
  int pick = 0;
  if (rank_of(comm) == 0)
    pick = static_cast<int>(std::random_device{}() % static_cast<unsigned>(size_of(comm)));
  MPI_Bcast(&pick, 1, MPI_INT, 0, comm);
  return pick;
}

TEST(Agreement, SuccessOnEveryRankDoesNotThrow) {
  int ran = 0;
  EXPECT_NO_THROW(collectively(MPI_COMM_WORLD, [&] { ran = 1; }));
  EXPECT_EQ(ran, 1);
  EXPECT_NO_THROW(tessera::mpi::agree(MPI_COMM_WORLD, nullptr));
}

TEST(Agreement, OneFailingRankMakesEveryRankThrowTheSameKind) {
  const int bad = random_rank(MPI_COMM_WORLD);
  const int rank = rank_of(MPI_COMM_WORLD);
  try {
    collectively(MPI_COMM_WORLD, [&] {
      if (rank == bad)
        TESSERA_THROW(InputError, "dataset /A has 3 dimensions, expected 2");
    });
    ADD_FAILURE() << "no error on rank " << rank << " (failing rank " << bad << ")";
  } catch (const tessera::InputError& e) {
    EXPECT_TRUE(e.collective());
    const std::string what = e.what();
    EXPECT_NE(what.find("dataset /A has 3 dimensions"), std::string::npos) << what;
    if (rank != bad) {
      EXPECT_NE(what.find("rank " + std::to_string(bad)), std::string::npos) << what;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error type: " << e.what();
  }
}

TEST(Agreement, LowestFailingRanksMessageWins) {
  const int size = size_of(MPI_COMM_WORLD);
  const int rank = rank_of(MPI_COMM_WORLD);
  const int first = random_rank(MPI_COMM_WORLD);
  // Ranks >= first fail, each with a different kind; the others must see the first one's kind.
  try {
    collectively(MPI_COMM_WORLD, [&] {
      if (rank == first)
        TESSERA_THROW(IoError, "cannot open out.h5 from rank {}", rank);
      if (rank > first)
        TESSERA_THROW(ResourceError, "out of memory on rank {}", rank);
    });
    ADD_FAILURE() << "no error";
  } catch (const tessera::IoError& e) {
    EXPECT_LE(rank, first);
    EXPECT_TRUE(e.collective());
    EXPECT_NE(std::string(e.what()).find("out.h5 from rank " + std::to_string(first)),
              std::string::npos)
        << e.what();
  } catch (const tessera::ResourceError& e) {
    // A failing rank rethrows its own error.
    EXPECT_GT(rank, first);
    EXPECT_TRUE(e.collective());
  }
  (void)size;
}

TEST(Agreement, ForeignExceptionsBecomeTesseraErrors) {
  const int bad = random_rank(MPI_COMM_WORLD);
  const int rank = rank_of(MPI_COMM_WORLD);
  try {
    collectively(MPI_COMM_WORLD, [&] {
      if (rank == bad)
        throw std::bad_alloc();
    });
    ADD_FAILURE() << "no error";
  } catch (const tessera::ResourceError& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
  try {
    collectively(MPI_COMM_WORLD, [&] {
      if (rank == bad)
        throw std::runtime_error("plain failure");
    });
    ADD_FAILURE() << "no error";
  } catch (const tessera::Error& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_STREQ(e.kind(), "error");
    EXPECT_NE(std::string(e.what()).find("plain failure"), std::string::npos) << e.what();
  }
}

// The bounded wait (collectively_or_abort): when every rank comes to the agreement, however late
// the ranks that succeeded arrive, it is an agreement like collectively()'s and nobody aborts.
TEST(Agreement, BoundedWaitAgreesWhenEveryRankArrives) {
  const int bad = random_rank(MPI_COMM_WORLD);
  const int rank = rank_of(MPI_COMM_WORLD);
  bool aborting = false;
  try {
    tessera::mpi::collectively_or_abort(
        MPI_COMM_WORLD, 600,
        [&] {
          if (rank == bad)
            TESSERA_THROW(IoError, "the disk of rank {} failed", rank);
          std::this_thread::sleep_for(std::chrono::milliseconds(50)); // the others come later
        },
        [&] { aborting = true; });
    ADD_FAILURE() << "no error";
  } catch (const tessera::IoError& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_NE(std::string(e.what()).find("the disk of rank " + std::to_string(bad)),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(aborting);
  EXPECT_NO_THROW(tessera::mpi::collectively_or_abort(MPI_COMM_WORLD, 600, [] {}));
}

TEST(Agreement, CommunicatorStillUsableAfterAFailure) {
  const int bad = random_rank(MPI_COMM_WORLD);
  const int rank = rank_of(MPI_COMM_WORLD);
  EXPECT_THROW(collectively(MPI_COMM_WORLD,
                            [&] {
                              if (rank == bad)
                                TESSERA_THROW(InternalError, "x");
                            }),
               tessera::InternalError);
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sum, size_of(MPI_COMM_WORLD));
}

// collectively_or_abort: bounded only for a failed rank, and only while the others are missing.
// Ranks that arrive late, but within the bound, agree as collectively() would: no abort.
TEST(Agreement, WithinTheBoundLateRanksStillAgree) {
  const int bad = random_rank(MPI_COMM_WORLD);
  const int rank = rank_of(MPI_COMM_WORLD);
  EXPECT_NO_THROW(tessera::mpi::collectively_or_abort(MPI_COMM_WORLD, 0.0, [] {}));
  try {
    tessera::mpi::collectively_or_abort(MPI_COMM_WORLD, 60.0, [&] {
      if (rank == bad)
        TESSERA_THROW(IoError, "H5Dread failed on rank {}", rank);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    });
    ADD_FAILURE() << "no error on rank " << rank;
  } catch (const tessera::IoError& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_NE(std::string(e.what()).find("H5Dread failed on rank " + std::to_string(bad)),
              std::string::npos)
        << e.what();
  }
}

} // namespace
