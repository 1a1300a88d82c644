// The public communicator helpers, over mpi/ (which makes every MPI call).
#include <tessera/communicator.hpp>

#include "mpi/communicator.hpp"
#include "mpi/fortran_comm.hpp"

namespace tessera {

MPI_Comm comm_from_fortran(MPI_Fint handle) {
  return mpi::comm_from_fortran(handle);
}

int comm_rank(MPI_Comm comm) {
  return mpi::comm_rank(comm);
}

} // namespace tessera
