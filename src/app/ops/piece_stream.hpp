// Read-ahead and write-behind for a file job whose compute stays on each rank (no exchange
// between ranks): the I/O thread reads piece p + 1 and writes piece p − 1 while the calling
// thread computes piece p. Used by the permutation of a dataset's dimensions
// (ops/permute_dataset.hpp); the matrix transpose, whose compute exchanges between ranks, has
// its own pipeline (ops/out_of_core_pipeline.hpp) on the same pattern.
//
// Buffers circulate through four StagingQueues (free and full, for read pieces and for computed
// ones), so memory stays the buffers given, however far one side runs ahead. With n buffers per
// direction, the I/O thread reads up to n − 1 pieces ahead of compute and writes each n − 1
// steps after reading it.
//
// Every HDF5 call is on the I/O thread (HDF5 is not thread-safe), which reads and writes in the
// same order on every rank, so the collective transfers match. Its steps agree on success
// (mpi::collectively on the thread's communicator) before each transfer: a failure on one rank,
// on either side, stops the I/O thread of every rank at the same step, and the aborted queues
// then wake compute everywhere. Compute itself makes no collective call.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "io/io_thread.hpp"
#include "ops/out_of_core_fault.hpp"

namespace tessera::ops {

struct PieceStreamSteps {
  std::int64_t count = 0; // pieces, the same on every rank
  // On the I/O thread, in piece order; collective over the ranks (each rank's piece p together).
  std::function<void(std::int64_t piece, void* buffer)> read;
  std::function<void(std::int64_t piece, const void* buffer)> write;
  // On the calling thread; local to the rank. `in` holds what read filled, `out` goes to write.
  std::function<void(std::int64_t piece, const void* in, void* out)> compute;
};

// Seconds one side waited for the other (from the queues' pop waits).
struct PieceStreamWaits {
  double compute_waited_io = 0.0;
  double io_waited_compute = 0.0;
};

// Collective over io's communicator. `in` and `out`: the buffers (at least two each, the same
// number) for read and for computed pieces, each as large as a piece needs. `fault` (test
// hook, ops/out_of_core_fault.hpp) fails one side of one rank at one piece. Returns once every
// piece is written; throws on every rank when any side of any rank failed, after both sides
// have stopped.
PieceStreamWaits stream_pieces(io::IoThread& io, const PieceStreamSteps& steps,
                               std::span<void* const> in, std::span<void* const> out,
                               const std::optional<detail::FaultSpec>& fault = std::nullopt);

} // namespace tessera::ops
