// The permutation engines' factory and their shared host placement (permute_engine.hpp).
#include "mpi/permute_engine.hpp"

#include <vector>

#include "core/throw.hpp"
#include "cpu/copy_2d.hpp"

namespace tessera {

void place_permuted_pieces(const PermuteSlabs& s, std::size_t element_size, const void* send,
                           const void* recv, void* out) {
  const auto bytes = [element_size](std::int64_t n) {
    return static_cast<std::size_t>(n) * element_size;
  };
  std::vector<cpu::Copy2d> copies;
  for (int q = 0; q < s.nranks; ++q) {
    const auto k = static_cast<std::size_t>(q);
    const auto* src = q == s.rank
                          ? static_cast<const unsigned char*>(send) + bytes(s.send_offsets[k])
                          : static_cast<const unsigned char*>(recv) + bytes(s.recv_offsets[k]);
    copies.push_back({src, bytes(s.run(q)),
                      static_cast<unsigned char*>(out) + bytes(s.dst_offset(q)), bytes(s.dst_pitch),
                      bytes(s.run(q)), static_cast<std::size_t>(s.outer)});
  }
  cpu::copy_2d(copies);
}

std::unique_ptr<PermuteEngine> make_permute_engine(Backend backend, const PermuteSlabs& slabs,
                                                   std::size_t element_size, Memory memory) {
  switch (backend) {
  case Backend::Cpu:
    TESSERA_REQUIRE(memory == Memory::Host, InputError,
                    "the CPU backend permutes host memory; device pointers need the CUDA backend");
    return make_cpu_permute_engine(slabs, element_size);
  case Backend::Cuda:
    return make_cuda_permute_engine(slabs, element_size, memory);
  case Backend::Auto:
    break;
  }
  TESSERA_THROW(InternalError, "make_permute_engine: the backend must be resolved first");
}

} // namespace tessera
