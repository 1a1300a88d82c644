// Argument checks that every rank agrees on before a collective call. A check that fails on one
// rank only (one rank passes an array of the wrong type) must not leave the others waiting in
// the collective that follows: run the checks through check_on_every_rank, and every rank
// raises. The plans' execute() do so for what they can check themselves (the element type of
// the typed overloads, null blocks); bindings and applications use it for theirs.
#pragma once

#include <mpi.h>

#include <functional>

#include <tessera/export.h>

namespace tessera {

// Collective over comm: runs `checks` on every rank, then agrees on the outcome. When they threw
// on any rank, every rank throws an error of the same kind (tessera::Error and its kinds): the
// ranks whose checks failed their own error, the others one whose message names the lowest
// failing rank ("rank 1: …").
TESSERA_API void check_on_every_rank(MPI_Comm comm, const std::function<void()>& checks);

} // namespace tessera
