// All-to-all exchange of packed per-peer segments, independent of what the segments hold and
// where they were packed: the CPU transpose engine and host-staged GPU buffers both use it.
//
//   MessageExchange ex(comm, MPI_DOUBLE, sizeof(double), counts…);   // plan time
//   ex.alltoallv(send, recv);                                         // every execute
//
// Segments are given in elements per peer (64-bit). MPI counts are int, so a segment longer
// than `message_limit` elements travels as one derived datatype (chunks of message_limit
// elements plus a tail), and Alltoallv with such segments becomes Alltoallw with absolute
// addresses. The self entry is normally empty: the local piece is handled without MPI.
#pragma once

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <vector>

#include "mpi/communicator.hpp"

namespace tessera::mpi {

class MessageExchange {
public:
  MessageExchange() = default;
  // Collective only in that every rank must describe matching segments.
  MessageExchange(MPI_Comm comm, MPI_Datatype element, std::size_t element_size,
                  std::vector<std::int64_t> send_counts, std::vector<std::int64_t> send_offsets,
                  std::vector<std::int64_t> recv_counts, std::vector<std::int64_t> recv_offsets,
                  std::int64_t message_limit = INT_MAX);

  // One MPI_Alltoallv (Alltoallw when a count or offset exceeds message_limit).
  void alltoallv(const void* send, void* recv);
  // P-1 steps; at step k, send to rank+k and receive from rank-k (mod P), Isend/Irecv + Wait.
  void pairwise(const void* send, void* recv);
  // All receives posted first; then pack(peer) and an Isend per destination in pairwise order;
  // then `local()` (work that needs no message); then unpack(peer) for each source as soon as
  // its segment has arrived (MPI_Waitany), so packing and unpacking overlap the transfers.
  // Callbacks run on the calling thread; any of them may be empty.
  void pipelined(const void* send, void* recv, const std::function<void(int)>& pack,
                 const std::function<void()>& local, const std::function<void(int)>& unpack);

  int rank() const noexcept { return rank_; }
  int nranks() const noexcept { return size_; }
  // The pairwise schedule: destination and source of step k (1 <= k < P).
  int send_peer(int step) const noexcept { return (rank_ + step) % size_; }
  int recv_peer(int step) const noexcept { return (rank_ - step + size_) % size_; }
  // Whether some segment needs the large-message path (derived datatypes).
  bool large_messages() const noexcept { return large_; }

private:
  // One segment as an MPI (count, datatype) pair.
  struct Segment {
    int count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
  };
  Segment segment(std::int64_t elements, std::vector<unique_datatype>& owned) const;
  void alltoallw(const void* send, void* recv);

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Datatype element_ = MPI_DATATYPE_NULL;
  std::size_t element_size_ = 0;
  std::int64_t limit_ = INT_MAX;
  int rank_ = 0;
  int size_ = 1;
  bool large_ = false;
  std::vector<std::int64_t> send_counts_, send_offsets_, recv_counts_, recv_offsets_;
  std::vector<Segment> send_segments_, recv_segments_;
  std::vector<unique_datatype> owned_types_;
  // Alltoallv's int arrays, when every count and offset fits.
  std::vector<int> sc_, so_, rc_, ro_;
};

} // namespace tessera::mpi
