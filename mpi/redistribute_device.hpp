// The CUDA backend of RedistributePlan, for blocks in device memory. Per round: one launch packs
// the rectangles for other ranks into a device send buffer, one copy moves it to pinned host
// memory, the round's all-to-all exchanges it (MPI reads host memory only: the library need not
// be CUDA-aware), one copy moves what arrived back to the device, and one launch unpacks it into
// B applying op, alpha and beta (cuda/redistribute.hpp). The rectangles a rank keeps go from A
// to B on the device by the same kernel, queued with the first round while its messages travel.
//
// Everything runs on one stream of the plan's; run() waits first for the caller's work on the
// legacy default stream (which may still be writing A or B) and returns when B is complete.
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype.hpp"
#include "cpu/redistribute_copy.hpp"
#include "cuda/buffer.hpp"
#include "cuda/redistribute.hpp"
#include "cuda/stream.hpp"
#include "mpi/message_exchange.hpp"
#include "mpi/redistribute_pieces.hpp"
#include "mpi/redistribute_rounds.hpp"

namespace tessera {

class DeviceRedistribution {
public:
  // The plan's rounds and kept pieces; src and dst: the strides of this rank's blocks of A (as
  // op(A) reads it) and B. Binds the process to its GPU if nothing did; allocates the device
  // and pinned buffers (ResourceError when they are not there).
  DeviceRedistribution(DType t, const std::vector<RedistributeRound>& rounds,
                       const std::vector<RedistributePiece>& local, const cpu::BlockStrides& src,
                       const cpu::BlockStrides& dst);

  // Collective (the exchanges). a and b: device pointers (null where the rank holds none).
  void run(const void* a, void* b, std::vector<mpi::MessageExchange>& exchanges,
           const cuda::ElementUpdate& update);

private:
  // A list of rectangles in moves_: [first, first + count), `tiles` 32 × 32 tiles in all.
  struct MoveList {
    std::int64_t first = 0, count = 0, tiles = 0;
  };
  struct Round {
    MoveList pack, unpack;
    std::size_t send_bytes = 0, recv_bytes = 0;
  };
  void move(const MoveList& l, const void* src, void* dst, const cuda::ElementUpdate& u);

  DType dtype_;
  int device_; // bound first: the stream and event below belong to it
  cuda::unique_stream stream_;
  cuda::Event sent_; // the round's send buffer is in host memory
  cuda::DeviceBuffer moves_;
  MoveList local_;
  std::vector<Round> rounds_;
  cuda::DeviceBuffer d_send_, d_recv_;
  cuda::PinnedBuffer h_send_, h_recv_;
};

} // namespace tessera
