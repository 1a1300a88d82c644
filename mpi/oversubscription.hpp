// Whether the ranks of a job, with their OpenMP threads, ask more of a node than it has cores:
// ranks × threads beyond the cores makes every phase slower, and the shared-memory kernels
// unpredictably so, without any error — the usual cause of "tessera is slow on the cluster".
#pragma once

#include <mpi.h>

#include <string>

namespace tessera::mpi {

struct NodeLoad {
  std::string host; // of the most loaded node
  int ranks = 0;    // on that node (MPI_Comm_split_type shared)
  int threads = 0;  // OpenMP threads of those ranks, in all
  long cores = 0;   // the node's online CPUs
  bool oversubscribed = false;
};

// Collective over comm: the load of the node whose threads exceed its cores the most (any node
// when none does); the same on every rank. `threads_per_rank`: this rank's OpenMP threads.
NodeLoad most_loaded_node(MPI_Comm comm, int threads_per_rank);

// Collective, for a program's start: where OMP_NUM_THREADS is not set, each rank takes its
// share of the node's cores as its OpenMP threads (cores / ranks on the node, at least 1, at
// most the CPUs it may run on), so that a job of several ranks on one node does not
// oversubscribe it by default (docs/performance.md "Whole jobs"). Then rank 0 warns once, naming
// the node, when ranks × threads still exceed its cores (set by the user, or more ranks than
// cores).
void fit_threads_to_node(MPI_Comm comm);

} // namespace tessera::mpi
