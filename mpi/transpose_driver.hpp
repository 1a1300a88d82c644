// Runs one distributed transpose: drives a backend's TransposeEngine through pack, exchange and
// unpack with the chosen exchange algorithm, and records the phases.
#pragma once

#include "core/timers.hpp"
#include "mpi/message_exchange.hpp"
#include "mpi/transpose_engine.hpp"
#include "mpi/transpose_plan.hpp"

namespace tessera {

// `algorithm` is never Auto here. Phases go to `timers` when it is set: transpose.pack,
// transpose.self, transpose.exchange, transpose.unpack (bytes read + written for the local
// steps, bytes sent + received for the exchange).
void run_transpose(TransposeEngine& engine, mpi::MessageExchange& exchange,
                   const TransposeLayout& layout, std::size_t element_size, Exchange algorithm,
                   const void* in, void* out, PhaseTimers* timers);

} // namespace tessera
