// Helpers the C API tests share: this rank and the job size, and the check that a call failed
// as bad input on every rank. Public headers and MPI only, as the tests call libtessera.so as a
// C application does.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <tessera/tessera.h>

namespace tessera::c_test {

inline int comm_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}
inline int comm_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// A message, and the same code on every rank.
inline void expect_input_error(int rc) {
  EXPECT_EQ(rc, TESSERA_ERROR_INPUT);
  EXPECT_STRNE(tessera_last_error(), "");
  int max = rc, min = rc;
  MPI_Allreduce(MPI_IN_PLACE, &max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(max, min);
}

} // namespace tessera::c_test
