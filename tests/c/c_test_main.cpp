// The main of every C API test: MPI, GoogleTest, and the ranks agree on the outcome. Not the
// shared MPI test main (tests/mpi_main.cpp), which uses tessera's internals: these tests link
// libtessera.so and the public headers alone.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  int failed = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
