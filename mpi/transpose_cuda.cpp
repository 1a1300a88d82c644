// The CUDA engine of the distributed transpose (contract: mpi/transpose_engine.hpp).
//
// The sender transposes on the GPU (cuda::transpose with leading dimensions) into a device
// staging buffer laid out like the send buffer: the columns left and right of the self piece in
// two launches, which puts every remote piece in one contiguous run. The runs reach the host
// send buffer (pinned) by one D2H copy per peer on a second stream, each with its own event, so
// under the pipelined exchange the first pieces travel while later ones are still being copied.
// When the MPI library reads device memory (MPIX_Query_cuda_support) the send and receive
// buffers stay on the device and nothing is staged. A received piece (n_r × m_q) goes straight
// to columns [b_q, e_q) of the output rows with one 2-D copy. Host-resident data
// (config.memory == Host) is copied to the device in begin() and back in end().
//
// The on-device exchange (Exchange::Nccl) skips the host entirely: the pieces packed into the
// device staging buffer go out through NCCL sends and land in a device receive buffer. The
// transfers run on the copy stream, after the pack (an event), so that the self transpose on
// the compute stream overlaps them; the unpack waits for them (another event). The host queues
// all of it and waits only in end().
//
// Column-major blocks (TransposeEngineConfig::column_major): each remote piece is a contiguous
// run of the input, so nothing is transposed before sending. NCCL sends straight from the
// input; the MPI exchanges copy each run to the send buffer. A received piece is transposed
// into its rows of the output, from the device receive buffer (after an H2D copy when it
// arrived in host memory).
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <vector>

#include "core/log.hpp"
#include "core/throw.hpp"
#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "cuda/stream.hpp"
#include "cuda/transpose.hpp"
#include "mpi/nccl_comm.hpp"
#include "mpi/transpose_engine.hpp"

namespace tessera {

namespace {

// Whether this MPI library accepts device pointers (Open MPI built with CUDA, MVAPICH2-GDR…).
bool mpi_reads_device_memory() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

class CudaTransposeEngine final : public TransposeEngine {
public:
  explicit CudaTransposeEngine(const TransposeEngineConfig& c)
      : layout_(c.layout), dtype_(c.dtype), size_(dtype_size(c.dtype)), memory_(c.memory),
        device_exchange_(c.device_exchange), host_exchange_(c.host_exchange),
        column_major_(c.column_major) {
    cuda::ensure_device_bound();
    compute_ = cuda::make_stream();
    copies_ = cuda::make_stream();
    device_mpi_ = mpi_reads_device_memory();
    const auto& L = layout_;
    if (memory_ == Memory::Host) {
      d_in_ = cuda::DeviceBuffer(bytes(L.my_rows() * L.N()));
      d_out_ = cuda::DeviceBuffer(bytes(L.my_cols() * L.M()));
    }
    transposed_.emplace_back(false);
    exchanged_.emplace_back(false);
    for (int q = 0; q < L.nranks(); ++q) {
      piece_ready_.emplace_back(false);
      // Column-major: where the piece for q starts in the input (its rows [b'_q, e'_q)).
      input_offsets_.push_back(L.out.begin(q) * L.my_rows());
    }
    log::debug("cuda transpose engine: {} exchange buffers",
               device_mpi_ ? "device (CUDA-aware MPI)" : "pinned host");
  }

  void prepare(void* send_buffer, bool need_recv) override {
    const auto& L = layout_;
    // Column-major pieces go out straight from the input, except through a CUDA-aware MPI,
    // whose exchange reads the send buffer's layout.
    if (!column_major_ || (send_buffer == nullptr && device_mpi_ && host_exchange_))
      d_send_ = cuda::DeviceBuffer(bytes(L.send_elements()));
    if (send_buffer != nullptr) {
      send_ptr_ = send_buffer; // the plan's node-shared window: host memory
    } else if (device_mpi_ || !host_exchange_) {
      send_ptr_ = d_send_.data();
    } else {
      h_send_ = cuda::PinnedBuffer(bytes(L.send_elements()));
      send_ptr_ = h_send_.data();
    }
    // Column-major pieces are transposed out of device memory, wherever they arrived.
    if ((device_mpi_ && need_recv) || device_exchange_ || column_major_)
      d_recv_ = cuda::DeviceBuffer(bytes(L.recv_elements()));
    if (need_recv && host_exchange_) {
      if (device_mpi_) {
        recv_ptr_ = d_recv_.data();
      } else {
        h_recv_ = cuda::PinnedBuffer(bytes(L.recv_elements()));
        recv_ptr_ = h_recv_.data();
      }
    }
  }
  void* send_buffer() override { return send_ptr_; }
  void* recv_buffer() override { return recv_ptr_; }

  void begin(const void* in, void* out) override {
    const auto& L = layout_;
    host_out_ = nullptr;
    if (memory_ == Memory::Host) {
      cuda::copy_async(compute_.get(), d_in_.data(), in, bytes(L.my_rows() * L.N()));
      in_ = static_cast<const char*>(d_in_.data());
      out_ = static_cast<char*>(d_out_.data());
      host_out_ = out;
    } else {
      cuda::wait_for_default_stream(); // the caller's kernels may still be writing `in`
      in_ = static_cast<const char*>(in);
      out_ = static_cast<char*>(out);
    }
    packed_ = false;
    exchange_pending_ = false;
  }

  void pack(int peer) override {
    if (!packed_)
      enqueue_pack(true);
    piece_ready_[static_cast<std::size_t>(peer)].synchronize();
  }

  void pack_all() override {
    if (!packed_)
      enqueue_pack(true);
    cuda::synchronize(copies_.get());
  }

  void transpose_self() override {
    const auto& L = layout_;
    if (column_major_) {
      cuda::transpose(compute_.get(), dtype_, in_ + bytes(input_offsets_[self()]),
                      out_ + bytes(L.in.begin(L.rank) * L.my_cols()), L.my_cols(), L.my_rows(),
                      L.my_rows(), L.my_cols());
      return;
    }
    cuda::transpose(compute_.get(), dtype_, in_ + bytes(L.out.begin(L.rank)),
                    out_ + bytes(L.in.begin(L.rank)), L.my_rows(), L.my_cols(), L.N(), L.M());
  }

  void unpack(int peer, const void* piece) override {
    const auto& L = layout_;
    const std::int64_t m = L.in.rows(peer);
    if (m == 0 || L.my_cols() == 0)
      return;
    wait_for_exchange();
    if (column_major_) {
      // The n_r × m_q piece → stored output rows [b_q, e_q), from device memory.
      const auto* src = static_cast<const char*>(piece);
      auto* staged = static_cast<char*>(d_recv_.data()) +
                     bytes(L.recv_offsets[static_cast<std::size_t>(peer)]);
      if (!in_device_receive_buffer(src)) {
        cuda::copy_async(compute_.get(), staged, src, bytes(m * L.my_cols()));
        src = staged;
      }
      cuda::transpose(compute_.get(), dtype_, src, out_ + bytes(L.in.begin(peer) * L.my_cols()),
                      L.my_cols(), m, m, L.my_cols());
      return;
    }
    // n_r rows of m_q elements into columns [b_q, e_q) of the output rows.
    cuda::copy_2d_async(compute_.get(), out_ + bytes(L.in.begin(peer)), bytes(L.M()), piece,
                        bytes(m), bytes(m), static_cast<std::size_t>(L.my_cols()));
  }

  void unpack_all(const void* const* pieces) override {
    for (int q = 0; q < layout_.nranks(); ++q)
      if (q != layout_.rank)
        unpack(q, pieces[q]);
  }

  bool exchanges_on_device() const override { return true; }

  // The pieces stay in d_send_: no copy to the host send buffer.
  void pack_device() override {
    if (!packed_)
      enqueue_pack(false);
  }

  const void* exchange_device(mpi::NcclComm& nccl) override {
    const auto& L = layout_;
    TESSERA_REQUIRE(device_exchange_, InternalError,
                    "cuda transpose engine: the on-device exchange was not prepared");
    pack_device();
    transposed_[0].wait_on(copies_.get());
    if (column_major_)
      nccl.exchange(in_, L.send_counts, input_offsets_, d_recv_.data(), L.recv_counts,
                    L.recv_offsets, size_, copies_.get());
    else
      nccl.exchange(d_send_.data(), L.send_counts, L.send_offsets, d_recv_.data(), L.recv_counts,
                    L.recv_offsets, size_, copies_.get());
    exchanged_[0].record(copies_.get());
    exchange_pending_ = true;
    return d_recv_.data();
  }

  void synchronize() override {
    cuda::synchronize(copies_.get());
    cuda::synchronize(compute_.get());
  }
  void synchronize_local() override { cuda::synchronize(compute_.get()); }

  void end() override {
    const auto& L = layout_;
    if (host_out_ != nullptr)
      cuda::copy_async(compute_.get(), host_out_, d_out_.data(), bytes(L.my_cols() * L.M()));
    cuda::synchronize(copies_.get());
    cuda::synchronize(compute_.get());
  }

private:
  std::size_t bytes(std::int64_t elements) const noexcept {
    return static_cast<std::size_t>(elements) * size_;
  }

  std::size_t self() const noexcept { return static_cast<std::size_t>(layout_.rank); }

  bool in_device_receive_buffer(const char* p) const noexcept {
    const auto* begin = static_cast<const char*>(d_recv_.data());
    return begin != nullptr && p >= begin && p < begin + bytes(layout_.recv_elements());
  }

  // Column-major: the pieces are runs of the input; each one's copy to the send buffer (unless
  // they stay where they are for NCCL) follows the input's arrival on the compute stream.
  void enqueue_copy_pieces(bool to_send_buffer) {
    const auto& L = layout_;
    transposed_[0].record(compute_.get());
    if (to_send_buffer)
      transposed_[0].wait_on(copies_.get());
    for (int q = 0; q < L.nranks(); ++q) {
      const auto k = static_cast<std::size_t>(q);
      if (q == L.rank)
        continue;
      if (to_send_buffer)
        cuda::copy_async(copies_.get(), static_cast<char*>(send_ptr_) + bytes(L.send_offsets[k]),
                         in_ + bytes(input_offsets_[k]), bytes(L.send_counts[k]));
      piece_ready_[k].record(to_send_buffer ? copies_.get() : compute_.get());
    }
    packed_ = true;
  }

  // The compute stream's next unpack reads what the on-device exchange received.
  void wait_for_exchange() {
    if (exchange_pending_) {
      exchanged_[0].wait_on(compute_.get());
      exchange_pending_ = false;
    }
  }

  // Both transposes on the compute stream, then each remote piece's D2H on the copy stream
  // with an event that pack(peer) waits for. Without `to_send_buffer` the pieces stay on the
  // device (the on-device exchange).
  void enqueue_pack(bool to_send_buffer) {
    if (column_major_) {
      enqueue_copy_pieces(to_send_buffer);
      return;
    }
    const auto& L = layout_;
    const std::int64_t left = L.out.begin(L.rank), right = L.out.end(L.rank);
    auto* dsend = static_cast<char*>(d_send_.data());
    cuda::transpose(compute_.get(), dtype_, in_, dsend, L.my_rows(), left, L.N(), L.my_rows());
    cuda::transpose(compute_.get(), dtype_, in_ + bytes(right), dsend + bytes(left * L.my_rows()),
                    L.my_rows(), L.N() - right, L.N(), L.my_rows());
    transposed_[0].record(compute_.get());
    const bool staged = to_send_buffer && send_ptr_ != d_send_.data();
    if (staged)
      transposed_[0].wait_on(copies_.get());
    for (int q = 0; q < L.nranks(); ++q) {
      if (q == L.rank)
        continue;
      const auto off = bytes(L.send_offsets[static_cast<std::size_t>(q)]);
      if (staged)
        cuda::copy_async(copies_.get(), static_cast<char*>(send_ptr_) + off, dsend + off,
                         bytes(L.send_counts[static_cast<std::size_t>(q)]));
      piece_ready_[static_cast<std::size_t>(q)].record(staged ? copies_.get() : compute_.get());
    }
    packed_ = true;
  }

  TransposeLayout layout_;
  DType dtype_;
  std::size_t size_;
  Memory memory_;
  bool device_exchange_ = false; // d_recv_ exists for exchange_device()
  bool host_exchange_ = true;    // the MPI exchanges' buffers exist
  bool column_major_ = false;
  bool device_mpi_ = false;
  std::vector<std::int64_t> input_offsets_; // column-major: each piece's run in the input
  cuda::unique_stream compute_, copies_;
  std::vector<cuda::Event> transposed_, exchanged_, piece_ready_;
  // d_in_/d_out_: host-resident data only; d_recv_: CUDA-aware MPI, the on-device exchange or
  // column-major blocks; d_send_: not for column-major blocks unless MPI reads device memory
  cuda::DeviceBuffer d_in_, d_out_, d_send_, d_recv_;
  cuda::PinnedBuffer h_send_, h_recv_;
  void* send_ptr_ = nullptr;
  void* recv_ptr_ = nullptr;
  const char* in_ = nullptr; // device pointers of this execute
  char* out_ = nullptr;
  void* host_out_ = nullptr; // where end() copies the output for host-resident data
  bool packed_ = false;
  bool exchange_pending_ = false; // exchanged_ not yet waited for by the compute stream
};

} // namespace

std::unique_ptr<TransposeEngine> make_cuda_transpose_engine(const TransposeEngineConfig& config) {
  TESSERA_REQUIRE(cuda::compiled(), NotCompiled,
                  "the CUDA backend was not compiled into this build of tessera");
  return std::make_unique<CudaTransposeEngine>(config);
}

} // namespace tessera
