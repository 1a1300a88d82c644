// The OpenMP engine of the distributed transpose: the sender transposes (cache-blocked
// cpu::transpose with leading dimensions, straight into the send buffer or, for the self piece,
// into the output), so unpacking a received piece is a strided copy of whole rows.
//
// Column-major blocks (TransposeEngineConfig::column_major): the piece for each peer is already
// a contiguous run of the input (rows [b'_s, e'_s) of the stored N × m_r block), so packing is a
// copy, and each piece is transposed on arrival into its rows [b_q, e_q) of the stored M × n_r
// output.
#include <cstring>

#include "core/aligned_buffer.hpp"
#include "cpu/transpose.hpp"
#include "mpi/transpose_engine.hpp"

namespace tessera {

namespace {

// Exchange staging, its pages touched up front so that a plan's first execute does not pay (and
// time) the page faults.
AlignedBuffer staging(std::size_t bytes, const char* what) {
  AlignedBuffer b(bytes, what);
  b.touch_pages();
  return b;
}

class CpuTransposeEngine final : public TransposeEngine {
public:
  explicit CpuTransposeEngine(const TransposeEngineConfig& c)
      : layout_(c.layout), dtype_(c.dtype), size_(dtype_size(c.dtype)),
        column_major_(c.column_major) {}

  void prepare(void* send_buffer, bool need_recv) override {
    send_ptr_ = static_cast<char*>(send_buffer);
    if (!send_ptr_) {
      send_ = staging(bytes(layout_.send_elements()), "the transpose send buffer");
      send_ptr_ = static_cast<char*>(send_.data());
    }
    if (need_recv)
      recv_ = staging(bytes(layout_.recv_elements()), "the transpose receive buffer");
  }
  void* send_buffer() override { return send_ptr_; }
  void* recv_buffer() override { return recv_.data(); }

  void begin(const void* in, void* out) override {
    in_ = static_cast<const char*>(in);
    out_ = static_cast<char*>(out);
  }

  void pack(int peer) override {
    const auto& L = layout_;
    if (column_major_) {
      copy(send_at(L.send_offsets[peer]), in_ + bytes(L.out.begin(peer) * L.my_rows()),
           L.out.rows(peer) * L.my_rows());
      return;
    }
    cpu::transpose(dtype_, in_ + bytes(L.out.begin(peer)), send_at(L.send_offsets[peer]),
                   L.my_rows(), L.out.rows(peer), L.N(), L.my_rows());
  }

  void pack_all() override {
    // Columns left of the self piece, then right of it: every remote piece in two transposes.
    const auto& L = layout_;
    const std::int64_t left = L.out.begin(L.rank), right_begin = L.out.end(L.rank);
    if (column_major_) {
      copy(send_at(0), in_, left * L.my_rows());
      copy(send_at(left * L.my_rows()), in_ + bytes(right_begin * L.my_rows()),
           (L.N() - right_begin) * L.my_rows());
      return;
    }
    cpu::transpose(dtype_, in_, send_at(0), L.my_rows(), left, L.N(), L.my_rows());
    cpu::transpose(dtype_, in_ + bytes(right_begin), send_at(left * L.my_rows()), L.my_rows(),
                   L.N() - right_begin, L.N(), L.my_rows());
  }

  void transpose_self() override {
    const auto& L = layout_;
    if (column_major_) {
      cpu::transpose(dtype_, in_ + bytes(L.out.begin(L.rank) * L.my_rows()),
                     out_ + bytes(L.in.begin(L.rank) * L.my_cols()), L.my_cols(), L.my_rows(),
                     L.my_rows(), L.my_cols());
      return;
    }
    cpu::transpose(dtype_, in_ + bytes(L.out.begin(L.rank)), out_ + bytes(L.in.begin(L.rank)),
                   L.my_rows(), L.my_cols(), L.N(), L.M());
  }

  void unpack(int peer, const void* piece) override {
    const auto& L = layout_;
    const std::int64_t n = L.my_cols(), m = L.in.rows(peer), col = L.in.begin(peer);
    if (column_major_) {
      cpu::transpose(dtype_, piece, out_ + bytes(col * n), n, m, m, n);
      return;
    }
    const auto* src = static_cast<const char*>(piece);
#pragma omp parallel for schedule(static)
    for (std::int64_t j = 0; j < n; ++j)
      std::memcpy(out_ + bytes(j * L.M() + col), src + bytes(j * m), bytes(m));
  }

  void unpack_all(const void* const* pieces) override {
    // Row by row of the output, every source's run in it: each output row is written once,
    // front to back.
    const auto& L = layout_;
    const int p = L.nranks();
    if (column_major_) {
      for (int q = 0; q < p; ++q)
        if (q != L.rank)
          unpack(q, pieces[q]);
      return;
    }
#pragma omp parallel for schedule(static)
    for (std::int64_t j = 0; j < L.my_cols(); ++j) {
      char* row = out_ + bytes(j * L.M());
      for (int q = 0; q < p; ++q) {
        const std::int64_t m = L.in.rows(q);
        if (q == L.rank || m == 0)
          continue;
        std::memcpy(row + bytes(L.in.begin(q)), static_cast<const char*>(pieces[q]) + bytes(j * m),
                    bytes(m));
      }
    }
  }

  void end() override {}

  bool reads_shared_input() const override {
    return true;
  }
  void transpose_from(int peer, const void* peer_in) override {
    // Peer's rows [b_q, e_q), columns [b'_r, e'_r) → output columns [b_q, e_q).
    const auto& L = layout_;
    if (column_major_) {
      // Peer's stored rows [b'_r, e'_r) are the n_r × m_q piece it would have sent.
      unpack(peer,
             static_cast<const char*>(peer_in) + bytes(L.out.begin(L.rank) * L.in.rows(peer)));
      return;
    }
    cpu::transpose(dtype_, static_cast<const char*>(peer_in) + bytes(L.out.begin(L.rank)),
                   out_ + bytes(L.in.begin(peer)), L.in.rows(peer), L.my_cols(), L.N(), L.M());
  }

private:
  std::size_t bytes(std::int64_t elements) const noexcept {
    return static_cast<std::size_t>(elements) * size_;
  }
  char* send_at(std::int64_t element) const noexcept {
    return send_ptr_ + bytes(element);
  }
  void copy(char* dst, const char* src, std::int64_t elements) const {
    cpu::parallel_copy(src, dst, bytes(elements));
  }

  TransposeLayout layout_;
  DType dtype_;
  std::size_t size_;
  bool column_major_ = false;
  char* send_ptr_ = nullptr; // send_, or the plan's shared-memory window
  AlignedBuffer send_, recv_;
  const char* in_ = nullptr;
  char* out_ = nullptr;
};

} // namespace

std::unique_ptr<TransposeEngine> make_cpu_transpose_engine(const TransposeEngineConfig& config) {
  return std::make_unique<CpuTransposeEngine>(config);
}

} // namespace tessera
