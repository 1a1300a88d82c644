// In memory or streamed out of core: the one rule `tessera transpose`, `tessera reduce` and
// pipeline decks follow. A dataset read from a file streams when asked to (--out-of-core,
// staging.out_of_core) or when its blocks do not fit the memory limit — the explicit one, or
// what the process may still use (core/memory_room.hpp: the cgroup's limit, MemAvailable,
// RLIMIT_AS), whichever is less, so that a dataset larger than memory streams instead of being
// killed halfway; a generated matrix never streams (it has no file to stream from) and must fit.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <limits>
#include <string>
#include <utility>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "ops/matrix_input.hpp"

namespace tessera::ops {

struct StagingChoice {
  std::size_t memory_limit = 0;              // bytes per rank; 0: none
  bool forced = false;                       // stream even when it fits
  std::string limit_name = "--memory-limit"; // the option or key, for messages
  // What this rank may still allocate (its share of the node's room, or its RLIMIT_AS room), and
  // what bounds it, for messages; infinite: unknown.
  double room = std::numeric_limits<double>::infinity();
  std::string room_source{};

  // Whether the matrix's size matters at all: callers need not inspect a file otherwise.
  bool may_stream() const noexcept { return forced || memory_limit > 0; }
};

// What the in-memory path holds: a matrix and, `with_transpose`, its transpose too.
struct WorkingSet {
  Shape shape;
  DType dtype = DType::f64;
  bool with_transpose = false;
};

// Bytes the in-memory path holds on the rank with the most rows (the first).
double in_memory_bytes(const WorkingSet& w, int nranks);

// True when the matrix must stream out of core; `name` says what it is in messages
// ("in.h5:/A"). Logs why when the limit decides. A generated matrix (`from_file` false) that
// would have to stream is a ResourceError, the same on every rank (the inputs are).
bool stream_out_of_core(const StagingChoice& choice, const WorkingSet& w, int nranks,
                        bool from_file, const std::string& name);

// Collective: the least room any rank of `comm` has (memory_room(), the node's share divided
// among the node's ranks), with its source; the same on every rank.
std::pair<double, std::string> room_per_rank(MPI_Comm comm);

// The decision of `tessera transpose` (`with_transpose`), `tessera reduce` and the pipeline job,
// from what opening the input learnt: the rule above, with choice.room from room_per_rank(),
// agreed over `comm` (collective).
bool stream_out_of_core(const StagingChoice& choice, const MatrixInput& input, bool with_transpose,
                        MPI_Comm comm);

} // namespace tessera::ops
