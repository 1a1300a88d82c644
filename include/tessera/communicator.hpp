// Communicators handed over by other languages: Fortran passes MPI_Fint handles, and mpi4py
// exposes a communicator's Fortran handle (`comm.py2f()`).
#pragma once

#include <mpi.h>

#include <tessera/export.h>

namespace tessera {

// MPI_Comm_f2c; throws InputError when the handle is MPI_COMM_NULL.
TESSERA_API MPI_Comm comm_from_fortran(MPI_Fint handle);

// This process's rank in `comm`; throws MpiError when MPI refuses the communicator.
TESSERA_API int comm_rank(MPI_Comm comm);

} // namespace tessera
