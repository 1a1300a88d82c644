// Communicators handed over from Fortran (and from mpi4py, which exposes the Fortran handle).
#pragma once

#include <mpi.h>

namespace tessera::mpi {

// MPI_Comm_f2c; throws InputError when the handle is not a valid communicator (MPI_COMM_NULL).
MPI_Comm comm_from_fortran(MPI_Fint handle);

} // namespace tessera::mpi
