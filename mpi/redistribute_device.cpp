// DeviceRedistribution (mpi/redistribute_device.hpp): the rectangle lists of every round, in one
// device array built at plan time, and the per-round launches, copies and exchange.
#include "mpi/redistribute_device.hpp"

#include <algorithm>

#include "cuda/device.hpp"

namespace tessera {

namespace {

// One side of the pieces' moves: a local block, or a packed buffer.
struct PieceSide {
  cpu::BlockStrides strides;
  bool packed = false; // a packed buffer, in the order strides.row_major names
};

std::int64_t device_piece_offset(const RedistributePiece& p, std::int64_t block_offset,
                                 const PieceSide& side) {
  return side.packed ? p.buffer_offset : block_offset;
}

void device_piece_strides(const RedistributePiece& p, const PieceSide& side, std::int64_t& row,
                          std::int64_t& col) {
  if (!side.packed) {
    row = side.strides.row_stride;
    col = side.strides.col_stride;
  } else if (side.strides.row_major) {
    row = p.cols;
    col = 1;
  } else {
    row = 1;
    col = p.rows;
  }
}

} // namespace

DeviceRedistribution::DeviceRedistribution(DType t, const std::vector<RedistributeRound>& rounds,
                                           const std::vector<RedistributePiece>& local,
                                           const cpu::BlockStrides& src,
                                           const cpu::BlockStrides& dst)
    : dtype_(t), device_(cuda::ensure_device_bound()), stream_(cuda::make_stream()), sent_(false) {
  std::vector<cuda::RectangleMove> moves;
  const auto append = [&moves](const std::vector<RedistributePiece>& pieces, const PieceSide& from,
                               const PieceSide& to) {
    MoveList l{static_cast<std::int64_t>(moves.size()), 0, 0};
    for (const RedistributePiece& p : pieces) {
      if (p.rows == 0 || p.cols == 0)
        continue;
      cuda::RectangleMove m;
      m.rows = p.rows;
      m.cols = p.cols;
      m.src_offset = device_piece_offset(p, p.src_offset, from);
      device_piece_strides(p, from, m.src_row_stride, m.src_col_stride);
      m.dst_offset = device_piece_offset(p, p.dst_offset, to);
      device_piece_strides(p, to, m.dst_row_stride, m.dst_col_stride);
      m.first_tile = l.tiles;
      l.tiles += cuda::rectangle_tiles(p.rows, p.cols);
      moves.push_back(m);
      ++l.count;
    }
    return l;
  };
  const PieceSide a{src, false}, b{dst, false}, packed{src, true};
  const auto element = dtype_size(t);
  std::size_t send_most = 0, recv_most = 0;
  local_ = append(local, a, b);
  for (const RedistributeRound& r : rounds) {
    Round d;
    d.pack = append(r.sends, a, packed);
    d.unpack = append(r.recvs, packed, b);
    d.send_bytes = static_cast<std::size_t>(r.send_total) * element;
    d.recv_bytes = static_cast<std::size_t>(r.recv_total) * element;
    send_most = std::max(send_most, d.send_bytes);
    recv_most = std::max(recv_most, d.recv_bytes);
    rounds_.push_back(d);
  }
  moves_ = cuda::DeviceBuffer(moves.size() * sizeof(cuda::RectangleMove));
  cuda::copy(moves_.data(), moves.data(), moves_.bytes());
  d_send_ = cuda::DeviceBuffer(send_most);
  h_send_ = cuda::PinnedBuffer(send_most);
  d_recv_ = cuda::DeviceBuffer(recv_most);
  h_recv_ = cuda::PinnedBuffer(recv_most);
}

void DeviceRedistribution::move(const MoveList& l, const void* src, void* dst,
                                const cuda::ElementUpdate& u) {
  cuda::move_rectangles(stream_.get(), dtype_, moves_.as<cuda::RectangleMove>() + l.first, l.count,
                        l.tiles, src, dst, u);
}

void DeviceRedistribution::run(const void* a, void* b, std::vector<mpi::MessageExchange>& exchanges,
                               const cuda::ElementUpdate& update) {
  cuda::wait_for_default_stream(); // the caller's kernels may still be writing A or B
  CUstream_st* s = stream_.get();
  for (std::size_t k = 0; k < rounds_.size(); ++k) {
    const Round& r = rounds_[k];
    if (r.send_bytes > 0) {
      move(r.pack, a, d_send_.data(), cuda::ElementUpdate{});
      cuda::copy_async(s, h_send_.data(), d_send_.data(), r.send_bytes);
    }
    // Also after the last round's copy out of h_recv_, which this round's exchange overwrites.
    sent_.record(s);
    if (k == 0) // the kept pieces, while the first round's messages travel
      move(local_, a, b, update);
    sent_.synchronize();
    exchanges[k].alltoallv(h_send_.data(), h_recv_.data());
    if (r.recv_bytes > 0) {
      cuda::copy_async(s, d_recv_.data(), h_recv_.data(), r.recv_bytes);
      move(r.unpack, d_recv_.data(), b, update);
    }
  }
  cuda::synchronize(s);
}

} // namespace tessera
