// Resolving Backend::Auto, and checking an explicit Backend::Cuda, the same way on every rank.
#pragma once

#include <mpi.h>

#include "core/backend.hpp"

namespace tessera::mpi {

// Collective over comm. Auto → Cuda when this build has the CUDA backend and every rank sees at
// least one device, else Cpu; rank 0 logs which and why (once per process and answer). Cuda when
// some rank has no usable device → InputError on every rank, naming that rank and the reason.
// Cpu → Cpu.
Backend resolve_backend(Backend requested, MPI_Comm comm);

// The same for work on data that lives in host memory and goes back there (file jobs): Auto →
// Cpu without asking the CUDA driver anything (starting it costs a file job more than it
// saves), as the host's cores move host data faster than a copy to the GPU and back does
// (docs/performance.md "Whole jobs"); rank 0 logs so once. Cuda and Cpu as above.
Backend resolve_backend_for_host_data(Backend requested, MPI_Comm comm);

} // namespace tessera::mpi
