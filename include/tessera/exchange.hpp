// The exchange algorithms of the distributed transpose, by name (plans, decks and the command
// line all speak of them).
#pragma once

#include <string_view>

#include <tessera/export.h>

namespace tessera {

// How the pieces cross ranks:
//   Alltoallv     one MPI_Alltoallv of packed pieces
//   PairwiseP2P   P-1 steps of Isend/Irecv with one partner each (rank ± step)
//   Pipelined     all receives posted, then pack + send per destination, unpacking each piece
//                 as it arrives, so that local work overlaps the transfers
//   SharedMemory  every rank on one node: pieces are packed into an MPI-3 shared-memory window
//                 and receivers copy them straight out of the senders' segments (no messages,
//                 one copy fewer)
//   Nccl          CUDA backend only, in builds with NCCL: pieces packed on the GPU go
//                 straight from device to device through NCCL sends and receives (no host
//                 buffers); needs one distinct GPU per rank
//   Auto          the fastest of those available, by a timed trial on the first execute (Nccl
//                 is a candidate with the CUDA backend when NCCL is usable and P > 1)
enum class Exchange { Auto, Alltoallv, PairwiseP2P, Pipelined, SharedMemory, Nccl };
TESSERA_API std::string_view exchange_name(Exchange e) noexcept;
// "auto", "alltoallv", "pairwise", "pipelined", "shared", "nccl"
TESSERA_API Exchange parse_exchange(std::string_view s);

} // namespace tessera
