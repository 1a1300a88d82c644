// The backend half of a distributed permutation of dimensions. A PermutePlan owns one engine
// (made by make_permute_engine for the resolved backend and memory) and drives it through the
// steps below; the exchange between pack and unpack is the plan's, so an engine moves bytes
// locally and makes no MPI call. Geometry and buffer layout: mpi/permute_slabs.hpp.
//
// One execute (per rank):
//   without an exchange (slabs.exchange false): permute(in, out)
//   with one: pack(in)        this rank's slab permuted into send_buffer() (host memory)
//             (the plan exchanges send_buffer() into recv_buffer())
//             unpack(out)     every piece, this rank's own included, placed into out
// `out` is complete when permute or unpack returns.
#pragma once

#include <cstddef>
#include <memory>

#include "core/backend.hpp"
#include "mpi/permute_slabs.hpp"

namespace tessera {

class PermuteEngine {
public:
  virtual ~PermuteEngine() = default;
  virtual void permute(const void* in, void* out) = 0;
  virtual void pack(const void* in) = 0;
  virtual void unpack(void* out) = 0;
  // What MPI reads and writes: host memory, allocated by the engine when the plan exchanges.
  virtual void* send_buffer() noexcept = 0;
  virtual void* recv_buffer() noexcept = 0;
};

// Throws ResourceError when the buffers cannot be allocated, InputError for device memory on
// the CPU backend, NotCompiled for the CUDA backend in a build without it.
std::unique_ptr<PermuteEngine> make_permute_engine(Backend backend, const PermuteSlabs& slabs,
                                                   std::size_t element_size, Memory memory);
std::unique_ptr<PermuteEngine> make_cpu_permute_engine(const PermuteSlabs& slabs,
                                                       std::size_t element_size);
std::unique_ptr<PermuteEngine> make_cuda_permute_engine(const PermuteSlabs& slabs,
                                                        std::size_t element_size, Memory memory);

// unpack() for host memory: the pieces in `recv` (laid out by slabs.recv_offsets) and the self
// piece in `send` into `out`, with the OpenMP threads.
void place_permuted_pieces(const PermuteSlabs& slabs, std::size_t element_size, const void* send,
                           const void* recv, void* out);

} // namespace tessera
