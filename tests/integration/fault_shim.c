/* Fault injection from outside tessera, for abort_test.py: preloaded (LD_PRELOAD) into every
 * rank, it makes MPI_File_write_at_all fail at once on the rank that TESSERA_TEST_FAIL_RANK
 * names — as a disk failing on one node would — while the other ranks go on into the
 * collective write and wait there for it. */
#include <mpi.h>
#include <stdlib.h>

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                          MPI_Datatype datatype, MPI_Status* status) {
  const char* fail = getenv("TESSERA_TEST_FAIL_RANK");
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (fail && *fail && atoi(fail) == rank)
    return MPI_ERR_IO;
  return PMPI_File_write_at_all(fh, offset, buf, count, datatype, status);
}
