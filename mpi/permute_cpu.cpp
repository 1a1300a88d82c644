// The CPU engine of the distributed permutation (contract: mpi/permute_engine.hpp): the local
// permutation is cpu::permute (the OpenMP kernel for any rank and element size), the placement
// of the received pieces cpu::copy_2d.
#include <algorithm>

#include "core/aligned_buffer.hpp"
#include "cpu/permute.hpp"
#include "mpi/permute_engine.hpp"

namespace tessera {

namespace {

class CpuPermuteEngine final : public PermuteEngine {
public:
  CpuPermuteEngine(const PermuteSlabs& s, std::size_t element_size)
      : slabs_(s), element_size_(element_size) {
    if (!s.exchange)
      return;
    send_ = AlignedBuffer(bytes(s.in_elements), "the permutation's send buffer");
    recv_ = AlignedBuffer(bytes(s.recv_elements), "the permutation's receive buffer");
  }

  void permute(const void* in, void* out) override {
    cpu::permute(in, out, element_size_, slabs_.slab_shape, slabs_.axes);
  }
  void pack(const void* in) override {
    cpu::permute(in, send_.data(), element_size_, slabs_.slab_shape, slabs_.axes);
  }
  void unpack(void* out) override {
    place_permuted_pieces(slabs_, element_size_, send_.data(), recv_.data(), out);
  }
  void* send_buffer() noexcept override { return send_.data(); }
  void* recv_buffer() noexcept override { return recv_.data(); }

private:
  std::size_t bytes(std::int64_t n) const { return static_cast<std::size_t>(n) * element_size_; }

  PermuteSlabs slabs_;
  std::size_t element_size_;
  AlignedBuffer send_, recv_;
};

} // namespace

std::unique_ptr<PermuteEngine> make_cpu_permute_engine(const PermuteSlabs& slabs,
                                                       std::size_t element_size) {
  return std::make_unique<CpuPermuteEngine>(slabs, element_size);
}

} // namespace tessera
