#include "mpi/fortran_comm.hpp"

#include "core/throw.hpp"

namespace tessera::mpi {

MPI_Comm comm_from_fortran(MPI_Fint handle) {
  const MPI_Comm comm = MPI_Comm_f2c(handle);
  TESSERA_REQUIRE(comm != MPI_COMM_NULL, InputError,
                  "the Fortran communicator handle {} is MPI_COMM_NULL, expected a communicator",
                  static_cast<long>(handle));
  return comm;
}

} // namespace tessera::mpi
