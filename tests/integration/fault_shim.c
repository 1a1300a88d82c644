/* Fault injection from outside tessera, preloaded (LD_PRELOAD) into every rank:
 * - for abort_test.py: MPI_File_write_at_all fails at once on the rank that
 *   TESSERA_TEST_FAIL_RANK names — as a disk failing on one node would — while the other ranks
 *   go on into the collective write and wait there for it;
 * - for signal_test.py: with TESSERA_TEST_STALL=read or write, rank 0's first collective read or
 *   write never returns (as on a stalled file system); it first creates the file
 *   TESSERA_TEST_STALL_MARK, so that the test knows the job is inside the call when it sends
 *   its signal. */
#include <fcntl.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void stall_if(const char* what) {
  const char* stall = getenv("TESSERA_TEST_STALL");
  const char* mark = getenv("TESSERA_TEST_STALL_MARK");
  int rank = -1;
  if (!stall || strcmp(stall, what) != 0)
    return;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0)
    return;
  if (mark && *mark) {
    const int fd = open(mark, O_WRONLY | O_CREAT, 0644);
    if (fd >= 0)
      close(fd);
  }
  for (;;)
    pause();
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                          MPI_Datatype datatype, MPI_Status* status) {
  const char* fail = getenv("TESSERA_TEST_FAIL_RANK");
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (fail && *fail && atoi(fail) == rank)
    return MPI_ERR_IO;
  stall_if("write");
  return PMPI_File_write_at_all(fh, offset, buf, count, datatype, status);
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                         MPI_Datatype datatype, MPI_Status* status) {
  stall_if("read");
  return PMPI_File_read_at_all(fh, offset, buf, count, datatype, status);
}

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                     MPI_Status* status) {
  stall_if("read");
  return PMPI_File_read_at(fh, offset, buf, count, datatype, status);
}
