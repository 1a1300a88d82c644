// The backend half of a distributed transpose. A TransposePlan owns one engine (made by
// make_transpose_engine for the resolved backend) and drives it through the steps below with
// the exchange algorithm of its choice (run_transpose in mpi/transpose_driver.hpp); MPI calls
// stay in the driver and in MessageExchange, so a backend only moves bytes locally.
//
// Buffer layout: see mpi/transpose_layout.hpp. The send and receive buffers are what MPI reads
// and writes, so they are host memory (pinned, for a GPU engine) unless the engine knows that
// MPI accepts its device pointers. When every rank shares one node, the plan hands the engine
// a send buffer of its own (config.send_buffer: a shared-memory window that other ranks read
// directly); the engine packs into it instead of allocating one.
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
//                                        sender's shared-memory segment
//   end()                                out is complete when it returns
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "mpi/transpose_layout.hpp"

namespace tessera {

class TransposeEngine {
public:
  virtual ~TransposeEngine() = default;

  virtual void* send_buffer() = 0;
  // Allocated on first use: the shared-memory exchange never needs it.
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
};

struct TransposeEngineConfig {
  TransposeLayout layout;
  DType dtype = DType::f64;
  Memory memory = Memory::Host; // where begin()'s pointers live
  // Host memory of layout.send_elements() elements to pack into, owned by the plan; null: the
  // engine allocates its own.
  void* send_buffer = nullptr;
};

// One factory per backend; make_transpose_engine picks by `backend` (never Auto here).
std::unique_ptr<TransposeEngine> make_cpu_transpose_engine(const TransposeEngineConfig& config);
// mpi/transpose_cuda.cpp: device pointers in (or host pointers staged through the stream pool
// when config.memory is Host).
std::unique_ptr<TransposeEngine> make_cuda_transpose_engine(const TransposeEngineConfig& config);
std::unique_ptr<TransposeEngine> make_transpose_engine(Backend backend,
                                                       const TransposeEngineConfig& config);

} // namespace tessera
