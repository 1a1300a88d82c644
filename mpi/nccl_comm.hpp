// An NCCL communicator over the ranks of an MPI communicator, for exchanges between device
// buffers (the distributed transpose's Exchange::Nccl). Plain C++: NCCL's and CUDA's types are
// only forward-declared. Without NCCL in the build (TESSERA_HAVE_NCCL off) the constructor and
// exchange() throw NotCompiled and nccl_unavailable() names the reason.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/backend_fn.hpp"

struct CUstream_st;
struct ncclComm;

namespace tessera::mpi {

// True when this build can exchange through NCCL.
bool nccl_compiled() noexcept;

// Collective over comm: "" when an NCCL communicator can be built over comm on each rank's
// current device, else why not (the same text on every rank). NCCL needs one distinct GPU per
// rank: ranks that share a device (more ranks than GPUs on a node) make it unavailable.
TESSERA_NCCL_FN_OR("this build of tessera has no NCCL (configure with TESSERA_ENABLE_NCCL=ON where "
                   "nccl.h and libnccl are installed)",
                   std::string nccl_unavailable(MPI_Comm comm));

class NcclComm {
public:
  NcclComm() = default;
  // Collective over comm: rank 0 makes the unique id, every rank joins on its current device.
  // Check nccl_unavailable() first: NCCL cannot report a failure on one rank to the others.
  TESSERA_NCCL_FN(explicit NcclComm(MPI_Comm comm));
  ~NcclComm(); // ncclCommDestroy: local, so safe while an exception unwinds
  NcclComm(NcclComm&& o) noexcept
      : comm_(std::exchange(o.comm_, nullptr)), rank_(o.rank_), size_(o.size_) {}
  NcclComm& operator=(NcclComm&& o) noexcept;
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  explicit operator bool() const noexcept { return comm_ != nullptr; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }

  // Queues on `stream` one grouped send and receive per peer of the segments given in elements
  // of `element_size` bytes (counts and offsets per rank, 64-bit; empty segments and this
  // rank's own are skipped). Device pointers; returns once queued, not done.
  TESSERA_NCCL_FN(void exchange(const void* send, const std::vector<std::int64_t>& send_counts,
                                const std::vector<std::int64_t>& send_offsets, void* recv,
                                const std::vector<std::int64_t>& recv_counts,
                                const std::vector<std::int64_t>& recv_offsets,
                                std::size_t element_size, CUstream_st* stream));

private:
  TESSERA_NCCL_FN_OR(, void release() noexcept);
  ncclComm* comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
};

} // namespace tessera::mpi
