// The backend half of a distributed transpose. A TransposePlan owns one engine (made by
// make_transpose_engine for the resolved backend) and drives it through the steps below with
// the exchange algorithm of its choice (run_transpose in mpi/transpose_driver.hpp); MPI calls
// stay in the driver and in MessageExchange, so a backend only moves bytes locally.
//
// Buffer layout: see mpi/transpose_layout.hpp. The send and receive buffers are what MPI reads
// and writes, so they are host memory (pinned, for a GPU engine) unless the engine knows that
// MPI accepts its device pointers.
//
// Order of calls in one execute (per rank; any step may be a no-op for an engine):
//   begin(in, out)                       pointers of this execute: host or device, per engine
//   pack(peer) for each remote peer, or pack_all() once
//                                        after pack(peer) returns, peer's segment of
//                                        send_buffer() holds its final bytes (a GPU engine
//                                        synchronises its copy there)
//   transpose_self()                     the local piece, straight from in to out
//   unpack(peer) for each remote peer as its segment arrives, or unpack_all() once
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
  virtual void* recv_buffer() = 0;

  virtual void begin(const void* in, void* out) = 0;
  virtual void pack(int peer) = 0;
  virtual void pack_all() = 0;
  virtual void transpose_self() = 0;
  virtual void unpack(int peer) = 0;
  virtual void unpack_all() = 0;
  virtual void end() = 0;
};

struct TransposeEngineConfig {
  TransposeLayout layout;
  DType dtype = DType::f64;
  Memory memory = Memory::Host; // where begin()'s pointers live
};

// One factory per backend; make_transpose_engine picks by `backend` (never Auto here).
std::unique_ptr<TransposeEngine> make_cpu_transpose_engine(const TransposeEngineConfig& config);
// mpi/transpose_cuda.cpp: device pointers in (or host pointers staged through the stream pool
// when config.memory is Host).
std::unique_ptr<TransposeEngine> make_cuda_transpose_engine(const TransposeEngineConfig& config);
std::unique_ptr<TransposeEngine> make_transpose_engine(Backend backend,
                                                       const TransposeEngineConfig& config);

} // namespace tessera
