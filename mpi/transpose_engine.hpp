// The backend half of a distributed transpose. A TransposePlan owns one engine (made by
// make_transpose_engine for the resolved backend) and drives it through the steps below with
// the exchange algorithm of its choice (mpi/transpose_driver.hpp); MPI calls stay in the driver
// and in MessageExchange, so a backend only moves bytes locally.
//
// Buffer layout: see mpi/transpose_layout.hpp. The send and receive buffers are what MPI reads
// and writes, so they are host memory (pinned, for a GPU engine) unless the engine knows that
// MPI accepts its device pointers. prepare() allocates them before the first exchange; when
// every rank shares one node the plan passes a send buffer of its own there (a shared-memory
// window that the other ranks read directly), and the engine packs into it.
//
// Order of calls in one execute (per rank; any step may be a no-op for an engine):
//   begin(in, out)                       pointers of this execute: host or device, per engine
//   pack(peer) for each remote peer, or pack_all() once
//                                        after pack(peer) returns, peer's segment of
//                                        send_buffer() holds its final bytes (a GPU engine
//                                        synchronises its copy there)
//   transpose_self()                     the local piece, straight from in to out
//   unpack(peer, piece) for each remote peer as its piece arrives, or unpack_all(pieces) once;
//                                        a piece is host memory: in recv_buffer(), or in the
//                                        sender's shared-memory segment (device memory after
//                                        exchange_device(), below)
//   end()                                out is complete when it returns
//
// On-device exchange (only engines whose exchanges_on_device() is true; Exchange::Nccl):
//   begin(in, out), pack_device(), exchange_device(nccl), transpose_self() (while the transfers
//   run), unpack_all(pieces) with the pieces in the returned device receive buffer, end().
// These steps are queued on the engine's stream and return before the GPU has done them;
// synchronize() waits, for callers that time the phases.
//
// Direct execute (only engines whose reads_shared_input() is true): when every rank's input
// block lies in node-shared memory (TransposePlan::input_buffer()), the plan calls begin,
// transpose_self, transpose_from(peer, peer_in) for each remote peer, end: each rank builds its
// output straight from the others' inputs, with no buffer in between.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "mpi/transpose_layout.hpp"

namespace tessera {

namespace mpi {
class NcclComm;
}

class TransposeEngine {
public:
  virtual ~TransposeEngine() = default;

  // Allocates what the exchanges need, once, before the first of them. `send_buffer`: host
  // memory of layout.send_elements() elements, owned by the plan, to pack into; null: the engine
  // allocates its own. Without `need_recv` (only the shared-memory exchange will run) no
  // receive buffer is needed. Throws ResourceError when memory runs out.
  virtual void prepare(void* send_buffer, bool need_recv) = 0;
  virtual void* send_buffer() = 0;
  virtual void* recv_buffer() = 0;

  virtual void begin(const void* in, void* out) = 0;
  virtual void pack(int peer) = 0;
  virtual void pack_all() = 0;
  virtual void transpose_self() = 0;
  // `piece` holds the my_cols × in.rows(peer) block that peer sent (row-major).
  virtual void unpack(int peer, const void* piece) = 0;
  // pieces[q] for every remote q (pieces[rank] is not read).
  virtual void unpack_all(const void* const* pieces) = 0;
  virtual void end() = 0;

  // The direct execute: `peer_in` is peer's whole input block (host memory, in.rows(peer) × N).
  virtual bool reads_shared_input() const { return false; }
  virtual void transpose_from(int peer, const void* peer_in);

  // The on-device exchange: packs every remote piece into device memory, then sends and
  // receives them all through `nccl`; returns the device receive buffer (same layout as
  // recv_buffer()), which unpack_all() then reads.
  virtual bool exchanges_on_device() const { return false; }
  virtual void pack_device();
  virtual const void* exchange_device(mpi::NcclComm& nccl);
  // Waits for the work queued so far (a no-op for an engine that queues nothing).
  virtual void synchronize() {}
  // Waits for the local work queued so far (the transposes), not for transfers in flight.
  virtual void synchronize_local() {}
};

struct TransposeEngineConfig {
  TransposeLayout layout;
  DType dtype = DType::f64;
  Memory memory = Memory::Host; // where begin()'s pointers live
  // begin()'s blocks are stored by columns (TransposeOptions::column_major); the buffers and
  // the pieces in them are the same as for row-major blocks.
  bool column_major = false;
  // prepare() allocates the device receive buffer of exchange_device() (NCCL may run) ...
  bool device_exchange = false;
  // ... and the buffers of the MPI exchanges unless only the on-device exchange will run.
  bool host_exchange = true;
};

// One factory per backend; make_transpose_engine picks by `backend` (never Auto here).
std::unique_ptr<TransposeEngine> make_cpu_transpose_engine(const TransposeEngineConfig& config);
// mpi/transpose_cuda.cpp: device pointers in (or host pointers staged through the stream pool
// when config.memory is Host).
std::unique_ptr<TransposeEngine> make_cuda_transpose_engine(const TransposeEngineConfig& config);
std::unique_ptr<TransposeEngine> make_transpose_engine(Backend backend,
                                                       const TransposeEngineConfig& config);

} // namespace tessera
