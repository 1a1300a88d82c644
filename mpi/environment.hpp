// What the MPI library says about itself and how it was started, for checks and provenance.
#pragma once

#include <string>

namespace tessera::mpi {

// For a program's main: starts MPI asking for MPI_THREAD_MULTIPLE (tessera's I/O thread makes
// MPI calls while compute threads do too) and returns the level provided; finalize() ends it.
int init_thread_multiple(int* argc, char*** argv);
void finalize();
// Whether MPI_Init(_thread) has run (and MPI_Finalize not yet).
bool initialized() noexcept;
// The thread level MPI provides (MPI_THREAD_SINGLE … MPI_THREAD_MULTIPLE).
int thread_level();
// The first line of MPI_Get_library_version, e.g. "Open MPI v4.1.4, package: …"; "unknown"
// when MPI cannot say.
std::string library_version();

} // namespace tessera::mpi
