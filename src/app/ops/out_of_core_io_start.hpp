// The I/O side's opening of every out-of-core run: open the watched input, hand what it holds
// to compute, and wait for the geometry compute plans from it. A template because each run
// (transpose, reduce) plans its own Geometry type.
#pragma once

#include <mpi.h>

#include "io/dataset_ref.hpp"
#include "io/staging_queue.hpp"
#include "mpi/agreement.hpp"
#include "ops/out_of_core_pipeline.hpp"

namespace tessera::ops::detail {

template <class Geometry>
struct IoStart {
  WatchedInput input;
  Geometry geometry;
};

// Collective over the I/O thread's communicator: each step succeeds on every rank or fails on
// every rank (out_of_core_pipeline.hpp), so compute's planning error arrives here as the pop's.
template <class Geometry>
IoStart<Geometry> start_io_side(PipelineContext& ctx, const io::DatasetRef& in,
                                io::StagingQueue<io::DatasetInfo>& info,
                                io::StagingQueue<Geometry>& go, bool integers_as_f64 = false) {
  const MPI_Comm comm = ctx.io->comm();
  IoStart<Geometry> start{open_watched_input(ctx, in, integers_as_f64), Geometry{}};
  mpi::collectively(comm, [&] { info.push(start.input.info); });
  mpi::collectively(comm, [&] { start.geometry = *go.pop(); });
  return start;
}

} // namespace tessera::ops::detail
