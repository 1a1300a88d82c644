// The CUDA engine of the distributed permutation (contract: mpi/permute_engine.hpp), kept
// simple: the local permutation is cuda::permute on the engine's stream, and every piece for
// another rank crosses through pinned host buffers (the whole permuted slab goes down in one
// copy, each received piece comes up in one 2-D copy straight into its place in the output; the
// self piece is placed by a device-to-device 2-D copy). Host-resident data (Memory::Host) is
// permuted on the GPU by cuda::HostPermute, into the output or the host send buffer, and the
// pieces are placed on the host.
#include <algorithm>
#include <optional>

#include "core/throw.hpp"
#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "cuda/permute.hpp"
#include "cuda/stream.hpp"
#include "mpi/permute_engine.hpp"

namespace tessera {

namespace {

class CudaPermuteEngine final : public PermuteEngine {
public:
  CudaPermuteEngine(const PermuteSlabs& s, std::size_t element_size, Memory memory)
      : slabs_(s), element_size_(element_size) {
    cuda::ensure_device_bound();
    if (memory == Memory::Host)
      host_.emplace();
    else
      stream_ = cuda::make_stream();
    if (!s.exchange)
      return;
    // At least one byte each: MPI is handed real addresses even for empty segments.
    h_send_ = cuda::PinnedBuffer(std::max<std::size_t>(1, bytes(s.in_elements)));
    h_recv_ = cuda::PinnedBuffer(std::max<std::size_t>(1, bytes(s.recv_elements)));
    if (memory == Memory::Device)
      d_send_ = cuda::DeviceBuffer(bytes(s.in_elements));
  }

  void permute(const void* in, void* out) override {
    if (host_) {
      host_->run(in, out, element_size_, slabs_.slab_shape, slabs_.axes);
      return;
    }
    cuda::wait_for_default_stream(); // the caller's kernels may still be writing `in`
    cuda::permute(stream_.get(), in, out, element_size_, slabs_.slab_shape, slabs_.axes);
    cuda::synchronize(stream_.get());
  }

  void pack(const void* in) override {
    if (host_) {
      host_->run(in, h_send_.data(), element_size_, slabs_.slab_shape, slabs_.axes);
      return;
    }
    cuda::wait_for_default_stream();
    cuda::permute(stream_.get(), in, d_send_.data(), element_size_, slabs_.slab_shape, slabs_.axes);
    if (slabs_.in_elements > 0)
      cuda::copy_async(stream_.get(), h_send_.data(), d_send_.data(), bytes(slabs_.in_elements));
    cuda::synchronize(stream_.get());
  }

  void unpack(void* out) override {
    if (host_) {
      place_permuted_pieces(slabs_, element_size_, h_send_.data(), h_recv_.data(), out);
      return;
    }
    const PermuteSlabs& s = slabs_;
    for (int q = 0; q < s.nranks; ++q) {
      const auto k = static_cast<std::size_t>(q);
      if (s.run(q) == 0 || s.outer == 0)
        continue;
      const auto* src = q == s.rank
                            ? static_cast<const char*>(d_send_.data()) + bytes(s.send_offsets[k])
                            : static_cast<const char*>(h_recv_.data()) + bytes(s.recv_offsets[k]);
      cuda::copy_2d_async(stream_.get(), static_cast<char*>(out) + bytes(s.dst_offset(q)),
                          bytes(s.dst_pitch), src, bytes(s.run(q)), bytes(s.run(q)),
                          static_cast<std::size_t>(s.outer));
    }
    cuda::synchronize(stream_.get());
  }

  void* send_buffer() noexcept override { return h_send_.data(); }
  void* recv_buffer() noexcept override { return h_recv_.data(); }

private:
  std::size_t bytes(std::int64_t n) const { return static_cast<std::size_t>(n) * element_size_; }

  PermuteSlabs slabs_;
  std::size_t element_size_;
  std::optional<cuda::HostPermute> host_; // Memory::Host: its own stream and device buffers
  cuda::unique_stream stream_;            // Memory::Device
  cuda::PinnedBuffer h_send_, h_recv_;
  cuda::DeviceBuffer d_send_; // the permuted slab, before it goes down to h_send_
};

} // namespace

std::unique_ptr<PermuteEngine> make_cuda_permute_engine(const PermuteSlabs& slabs,
                                                        std::size_t element_size, Memory memory) {
  TESSERA_REQUIRE(cuda::compiled(), NotCompiled,
                  "the CUDA backend was not compiled into this build of tessera");
  return std::make_unique<CudaPermuteEngine>(slabs, element_size, memory);
}

} // namespace tessera
