// What a process can learn about its launch before MPI starts, and the transport defaults that
// make MPI's start cheap where the launch allows it.
#pragma once

namespace tessera::mpi {

// This process's rank as its launcher announced it in the environment (Open MPI, PMIx, PMI,
// Slurm's srun); 0 without a launcher. Valid before MPI_Init: who prints a usage error.
int launcher_rank() noexcept;

// True when no launcher started this process: MPI will start as a singleton of one rank.
bool started_without_launcher() noexcept;

// Before MPI_Init: where every rank of the job is on this node (a singleton, or a launcher
// that says so), the defaults of Open MPI's transports become shared memory only (pml ob1, btl
// self,vader) and a singleton starts without a support daemon: probing for network hardware
// and forking `orted` were most of a one-node job's start (docs/performance.md "Whole jobs").
// Everywhere, hwloc leaves out its GPU plugins (HWLOC_COMPONENTS), which load the GPU drivers
// during MPI_Init, and MPI-IO leaves out the shared-file-pointer component that maps a file in
// the session directory (OMPI_MCA_sharedfp). Variables the user set are left as they are.
void prefer_node_local_transports() noexcept;

} // namespace tessera::mpi
