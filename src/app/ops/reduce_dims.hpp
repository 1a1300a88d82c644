// `tessera reduce IN:/var --dims lat,lon --op … --output OUT.h5`: reductions of an N-D variable
// over a set of its dimensions, one f64 variable per op over the dimensions kept (in the input's
// order, with their dimension scales and coordinates), at OUT:/var_op.
//
// The array is seen as a matrix whose rows are the kept dimensions and whose columns are the
// reduced ones (both in the input's order): each value is the canonical row value of
// core/reduction.hpp over the reduced elements, missing values skipped and packed data decoded
// as `--axis rows` does (mpi/reduce_masked.hpp). A row never spans two ranks or two pieces, so
// the bits do not depend on the rank count, the thread count or the memory limit. The ranks
// split the first kept dimension (ops/permute_pieces.hpp) and exchange nothing.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "core/reduction.hpp"
#include "ops/permute_dataset.hpp"

namespace tessera::ops {

struct ReduceDimsOptions {
  std::vector<int> reduced; // input dimensions reduced over
  std::vector<Op> ops;      // sum, mean, min, max, count
  MissingValues missing;    // of the input (io/missing_values.hpp)
  std::string output;       // the output file
  std::size_t memory_limit = 0;
  const io::Provenance* provenance = nullptr;
  PhaseTimers* timers = nullptr;
};

struct ReduceDimsReport {
  std::vector<std::int64_t> shape;  // of each output variable
  std::vector<std::string> outputs; // their paths, in the order of the ops
  double seconds = 0;
};

// Collective. InputError (on every rank, before any output exists) for an op other than those
// above, no dimension kept or none reduced, or data that is neither f32, f64 nor packed.
ReduceDimsReport reduce_dims(ArrayInput& in, const ReduceDimsOptions& o, MPI_Comm comm);

} // namespace tessera::ops
