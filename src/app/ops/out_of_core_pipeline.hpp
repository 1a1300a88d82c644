// The machinery shared by the out-of-core transpose and reductions: chunk buffers circulating
// between the I/O thread and compute, the two-sided run with error propagation, progress lines
// and the per-side timers.
//
// Buffers circulate through a BufferRing: `free` holds empty buffers, `full` holds filled
// ones; the producer pops free and pushes full, the consumer pops full and pushes free. The
// number of buffers is fixed, so memory is bounded however far one side runs ahead, and the
// queues' wait times say who waited for whom.
//
// Collective calls on both sides (HDF5 transfers on the I/O thread, exchanges in compute) must
// be entered by every rank or by none. So each side works in steps: a local part (queue pops
// and pushes, which may rethrow the other side's error; fault injection) whose success every
// rank agrees on (mpi::collectively on that side's communicator), then the collective part.
// A failure anywhere thus stops that side on every rank at the same step; the side then aborts
// every queue, which wakes the other side, whose next local part fails on every rank too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/aligned_buffer.hpp"
#include "core/format_bytes.hpp"
#include "core/progress.hpp"
#include "core/timers.hpp"
#include "io/dataset_ref.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io/input_watch.hpp"
#include "io/io_thread.hpp"
#include "io/staging_queue.hpp"
#include "mpi/communicator.hpp"
#include "ops/out_of_core.hpp"
#include "ops/out_of_core_fault.hpp"

namespace tessera::ops::detail {

// One chunk travelling between the sides (its buffer is reused across chunks).
struct Slot {
  std::int64_t chunk = -1;
  AlignedBuffer* buffer = nullptr;
};

class BufferRing {
public:
  explicit BufferRing(int count)
      : free(static_cast<std::size_t>(count)), full(static_cast<std::size_t>(count)),
        count_(count) {}
  // Allocates the buffers and puts them all in `free`. Local (may throw bad_alloc).
  void allocate(std::size_t bytes);
  void abort(std::exception_ptr e) noexcept {
    free.abort(e);
    full.abort(e);
  }
  int count() const noexcept { return count_; }
  std::size_t allocated_bytes() const noexcept;

  io::StagingQueue<Slot> free;
  io::StagingQueue<Slot> full;

private:
  int count_;
  std::vector<std::unique_ptr<AlignedBuffer>> buffers_;
};

// The pop that a chunk loop expects to succeed: the other side closing early is a bug.
Slot pop_chunk(io::StagingQueue<Slot>& q, std::int64_t expected_chunk, const char* what);

// Rank 0's progress lines (core/progress.hpp: bytes done/total, GB/s, ETA; one log line per
// update when stdout is not a terminal). Used by one thread.
class ProgressMeter {
public:
  ProgressMeter(std::string what, double total_bytes, bool enabled, double interval_seconds);
  void add(double bytes);
  void finish();

private:
  std::optional<Progress> progress_;
  double done_ = 0.0;
};

// "1.50 GiB" (core/format_bytes.hpp).
using tessera::format_bytes;

// What both sides of one run share: compute's own communicator, the I/O thread, the fault
// to inject, the delays, and a timer set per side (each touched by its own thread only).
struct PipelineContext {
  // Collective over comm.
  PipelineContext(MPI_Comm comm, const OutOfCoreOptions& options);

  const OutOfCoreOptions& options;
  std::size_t memory_limit;
  int depth; // staging_depth, checked
  mpi::Communicator compute;
  std::unique_ptr<io::IoThread> io;
  std::optional<FaultSpec> fault;
  double io_delay_ms = 0.0;
  double compute_delay_ms = 0.0;
  double start = 0.0;
  PhaseTimers io_timers;      // the I/O thread's
  PhaseTimers compute_timers; // compute's
};

// Whole lines (rows or columns) of `line_elements` elements of `es` bytes in a chunk of about
// `bytes`: at least one, at most `lines`.
std::int64_t lines_in(std::size_t bytes, std::int64_t line_elements, std::size_t es,
                      std::int64_t lines);

// The largest n in [1, most] with fits(n), given fits(1) and that fits is monotone.
std::int64_t largest_fitting(std::int64_t most, const std::function<bool(std::int64_t)>& fits);

// Adds `from`'s phases to `into` (PhaseTimers has no merge: the calls are replayed, so the
// table's call counts stay right).
void merge_timers(PhaseTimers& into, const PhaseTimers& from);

// Sleeps for `ms` milliseconds when positive (the deliberate delays).
void delay_ms(double ms);

// Runs the transfer `io`; an IoError it throws (HDF5's message names neither file nor dataset)
// is thrown again as an IoError that starts with `what`, e.g. "reading a.h5:/A rows [0, 64)".
void with_context(const std::string& what, const std::function<void()>& io);

// Runs `io_side` as one request on the I/O thread and `compute_side` here. When either throws,
// `abort_all` (which must abort every queue both sides use) is called with its error so the
// other side wakes; both sides are always finished before this returns or throws. The
// compute side's error is preferred: it is the cause, or the I/O error it received.
void run_sides(io::IoThread& io, const std::function<void()>& io_side,
               const std::function<void()>& compute_side,
               const std::function<void(std::exception_ptr)>& abort_all);

// The input of a run, opened on the I/O thread: watched from before the open, so that whatever
// changes the file after it is seen by watch->check between chunks; then opened and inspected
// (timed as "open").
struct WatchedInput {
  std::optional<io::detail::InputWatch> watch;
  io::H5File file;
  io::DatasetInfo info;
};
// `integers_as_f64`: reductions, which read integer data as f64 (io/h5_matrix.hpp).
WatchedInput open_watched_input(PipelineContext& ctx, const io::DatasetRef& in,
                                bool integers_as_f64 = false);

// Fills the report's totals and waits (read from the queues: compute consumes `reads`, whose
// buffers the I/O thread fills, and produces `results`, which the I/O thread drains) and adds
// both sides' phases to options.timers.
void finish_report(PipelineContext& ctx, OutOfCoreReport& report, const BufferRing& reads,
                   const BufferRing* results);

} // namespace tessera::ops::detail
