// Runs one distributed transpose: drives a backend's TransposeEngine through pack, exchange and
// unpack with the chosen exchange algorithm, and records the phases.
#pragma once

#include <mpi.h>

#include "core/timers.hpp"
#include "mpi/exchange_algorithm.hpp"
#include "mpi/message_exchange.hpp"
#include "mpi/nccl_comm.hpp"
#include "mpi/shared_window.hpp"
#include "mpi/transpose_engine.hpp"

namespace tessera {

struct TransposeRun {
  TransposeEngine& engine;
  mpi::MessageExchange& exchange;
  const TransposeLayout& layout;
  std::size_t element_size;
  MPI_Comm comm;
  // The engine's send buffer as a shared-memory window; null unless every rank shares a node.
  const mpi::SharedWindow* window = nullptr;
  // For Exchange::Nccl: the plan's NCCL communicator; null when NCCL is not in use.
  mpi::NcclComm* nccl = nullptr;
};

// `algorithm` is never Auto here. Phases go to `timers` when it is set: transpose.pack,
// transpose.self, transpose.exchange, transpose.unpack (bytes read + written for the local
// steps, bytes sent + received for the exchange). The on-device exchange (Exchange::Nccl) queues
// its steps on the GPU; with `timers` the driver waits for each before timing the next, which
// costs a little overlap, without them it waits only at the end.
void run_transpose(const TransposeRun& run, Exchange algorithm, const void* in, void* out,
                   PhaseTimers* timers);

// The direct transpose: every rank's input block lies in `inputs` (node-shared memory), and
// each rank transposes its output rows straight out of them. Phases: transpose.self,
// transpose.peers (the pieces read from other ranks' blocks), transpose.exchange (waiting).
void run_transpose_direct(const TransposeRun& run, const mpi::SharedWindow& inputs, const void* in,
                          void* out, PhaseTimers* timers);

} // namespace tessera
