// The two sides of a piece stream (piece_stream.hpp).
#include "ops/piece_stream.hpp"

#include <exception>

#include "core/throw.hpp"
#include "io/staging_queue.hpp"
#include "mpi/agreement.hpp"
#include "ops/out_of_core_pipeline.hpp"

namespace tessera::ops {

namespace {

using detail::FaultSite;

struct Slot {
  std::int64_t piece = -1;
  void* data = nullptr;
};

struct Rings {
  explicit Rings(std::size_t n) : in_free(n), in_full(n), out_free(n), out_full(n) {}
  void abort(std::exception_ptr e) noexcept {
    in_free.abort(e);
    in_full.abort(e);
    out_free.abort(e);
    out_full.abort(e);
  }
  io::StagingQueue<Slot> in_free, in_full;   // read pieces: I/O thread → compute
  io::StagingQueue<Slot> out_free, out_full; // computed pieces: compute → I/O thread
};

// The pop a piece loop expects to succeed: the other side closing early is a bug.
Slot pop_piece(io::StagingQueue<Slot>& q, std::int64_t expected, const char* what) {
  auto s = q.pop();
  if (!s)
    TESSERA_THROW(InternalError, "the {} queue ended before piece {}", what, expected);
  if (expected >= 0 && s->piece != expected)
    TESSERA_THROW(InternalError, "the {} queue delivered piece {} where piece {} was due", what,
                  s->piece, expected);
  return *s;
}

// Step s reads piece s and writes piece s − depth; each step's local part (queues, fault) is
// agreed on by every rank before its collective transfer.
void io_side(io::IoThread& io, const PieceStreamSteps& steps, Rings& r, std::int64_t depth,
             const std::optional<detail::FaultSpec>& fault) {
  const MPI_Comm comm = io.comm();
  const int rank = io.rank();
  std::optional<Slot> written; // handed back to compute at the next agreed step
  const auto hand_back = [&] {
    if (written)
      r.out_free.push(*written);
    written.reset();
  };
  for (std::int64_t step = 0; step < steps.count + depth; ++step) {
    const bool read = step < steps.count;
    const std::int64_t wp = step - depth; // the piece written in this step
    const bool write = wp >= 0;
    Slot in;
    if (read) {
      mpi::collectively(comm, [&] {
        hand_back();
        in = pop_piece(r.in_free, -1, "free read-buffer");
        detail::inject_fault(fault, FaultSite::Read, rank, step);
      });
      steps.read(step, in.data);
      in.piece = step;
    }
    Slot out;
    mpi::collectively(comm, [&] {
      if (read)
        r.in_full.push(in);
      hand_back();
      if (write) {
        out = pop_piece(r.out_full, wp, "computed-piece");
        detail::inject_fault(fault, FaultSite::Write, rank, wp);
      }
    });
    if (write) {
      steps.write(wp, out.data);
      written = out;
    }
  }
  mpi::collectively(comm, [&] {
    hand_back();
    r.in_full.close();
  });
}

void compute_side(const PieceStreamSteps& steps, Rings& r, int rank,
                  const std::optional<detail::FaultSpec>& fault) {
  for (std::int64_t p = 0; p < steps.count; ++p) {
    const Slot in = pop_piece(r.in_full, p, "read-ahead");
    Slot out = pop_piece(r.out_free, -1, "free write-buffer");
    detail::inject_fault(fault, FaultSite::Compute, rank, p);
    steps.compute(p, in.data, out.data);
    out.piece = p;
    r.in_free.push(in);
    r.out_full.push(out);
  }
}

} // namespace

PieceStreamWaits stream_pieces(io::IoThread& io, const PieceStreamSteps& steps,
                               std::span<void* const> in, std::span<void* const> out,
                               const std::optional<detail::FaultSpec>& fault) {
  // The same on every rank (the caller's sizes), so no agreement is needed to refuse them.
  TESSERA_REQUIRE(in.size() >= 2 && in.size() == out.size(), InternalError,
                  "a piece stream needs the same number (two or more) of read and computed "
                  "buffers, got {} and {}",
                  in.size(), out.size());
  Rings r(in.size());
  for (void* b : in)
    r.in_free.push(Slot{-1, b});
  for (void* b : out)
    r.out_free.push(Slot{-1, b});
  const auto depth = static_cast<std::int64_t>(in.size()) - 1;
  detail::run_sides(
      io, [&] { io_side(io, steps, r, depth, fault); },
      [&] { compute_side(steps, r, io.rank(), fault); }, [&](std::exception_ptr e) { r.abort(e); });
  PieceStreamWaits w;
  w.compute_waited_io = r.in_full.stats().pop_wait_seconds + r.out_free.stats().pop_wait_seconds;
  w.io_waited_compute = r.in_free.stats().pop_wait_seconds + r.out_full.stats().pop_wait_seconds;
  return w;
}

} // namespace tessera::ops
