// Rounds of a redistribution: the stream cuts, and pieces cut along them into rectangles.
#include "mpi/redistribute_rounds.hpp"

#include <algorithm>
#include <climits>

#include "core/throw.hpp"

namespace tessera {

namespace {

std::int64_t rounds_ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// Elements of a v-element stream that travel before round k of r: floor(k·v / r), without the
// product (k·(v mod r) < r², which fits while r < 2^31: split_into_rounds checks).
std::int64_t stream_cut(std::int64_t v, std::int64_t r, std::int64_t k) {
  return k * (v / r) + k * (v % r) / r;
}

// Cuts pieces along the round boundaries of each peer's stream and appends the parts to the
// rounds: `side` selects sends or receives.
class RoundSplitter {
public:
  RoundSplitter(std::int64_t rounds, const cpu::BlockStrides& src, const cpu::BlockStrides& dst)
      : rounds_(rounds), src_(src), dst_(dst) {}

  void split(const std::vector<RedistributePiece>& pieces, const std::vector<std::int64_t>& counts,
             std::vector<RedistributeRound>& out,
             std::vector<RedistributePiece> RedistributeRound::*side,
             std::vector<std::int64_t> RedistributeRound::*round_counts,
             std::vector<std::int64_t> RedistributeRound::*round_offsets,
             std::int64_t RedistributeRound::*round_total) {
    const std::size_t n = counts.size();
    for (RedistributeRound& r : out) {
      (r.*round_counts).assign(n, 0);
      (r.*round_offsets).assign(n, 0);
      std::int64_t at = 0;
      const auto k = static_cast<std::int64_t>(&r - out.data());
      for (std::size_t peer = 0; peer < n; ++peer) {
        (r.*round_offsets)[peer] = at;
        (r.*round_counts)[peer] =
            stream_cut(counts[peer], rounds_, k + 1) - stream_cut(counts[peer], rounds_, k);
        at += (r.*round_counts)[peer];
      }
      r.*round_total = at;
    }
    // Pieces are grouped by peer in rank order, each peer's adding up to its count.
    std::size_t next = 0;
    for (std::size_t peer = 0; peer < n; ++peer) {
      const std::int64_t v = counts[peer];
      std::int64_t stream = 0; // where the next piece starts in this peer's stream
      std::int64_t k = 0;
      while (stream < v) {
        const RedistributePiece& piece = pieces[next++];
        const std::int64_t size = piece.rows * piece.cols;
        for (std::int64_t at = stream; at < stream + size;) {
          while (stream_cut(v, rounds_, k + 1) <= at)
            ++k;
          const std::int64_t end = std::min(stream + size, stream_cut(v, rounds_, k + 1));
          RedistributeRound& r = out[static_cast<std::size_t>(k)];
          const std::int64_t buffer = (r.*round_offsets)[peer] + at - stream_cut(v, rounds_, k);
          emit(piece, at - stream, end - stream, buffer, r.*side);
          at = end;
        }
        stream += size;
      }
    }
  }

private:
  // Elements [e0, e1) of the piece, in packing order, as at most three rectangles.
  void emit(const RedistributePiece& piece, std::int64_t e0, std::int64_t e1, std::int64_t buffer,
            std::vector<RedistributePiece>& out) const {
    const bool row_major = src_.row_major;
    const std::int64_t line = row_major ? piece.cols : piece.rows;
    // Lines [l0, l1), positions [c0, c1) along them.
    auto rect = [&](std::int64_t l0, std::int64_t l1, std::int64_t c0, std::int64_t c1) {
      const std::int64_t r0 = row_major ? l0 : c0, col0 = row_major ? c0 : l0;
      RedistributePiece part;
      part.rows = row_major ? l1 - l0 : c1 - c0;
      part.cols = row_major ? c1 - c0 : l1 - l0;
      part.src_offset = piece.src_offset + r0 * src_.row_stride + col0 * src_.col_stride;
      part.dst_offset = piece.dst_offset + r0 * dst_.row_stride + col0 * dst_.col_stride;
      part.buffer_offset = buffer;
      buffer += part.rows * part.cols;
      out.push_back(part);
    };
    std::int64_t l = e0 / line;
    if (const std::int64_t c = e0 % line; c > 0) {
      const std::int64_t end = std::min(e1, (l + 1) * line);
      rect(l, l + 1, c, c + end - e0);
      e0 = end;
      ++l;
    }
    if (const std::int64_t whole = (e1 - e0) / line; whole > 0) {
      rect(l, l + whole, 0, line);
      e0 += whole * line;
      l += whole;
    }
    if (e0 < e1)
      rect(l, l + 1, 0, e1 - e0);
  }

  std::int64_t rounds_;
  cpu::BlockStrides src_, dst_;
};

} // namespace

std::int64_t rounds_needed(const RedistributePieces& p, std::int64_t budget) {
  std::vector<std::int64_t> streams;
  for (const auto* counts : {&p.send_counts, &p.recv_counts})
    for (std::int64_t v : *counts)
      if (v > 0)
        streams.push_back(v);
  if (streams.empty())
    return 1;
  const auto need = [&](std::int64_t r) {
    std::int64_t n = 0;
    for (std::int64_t v : streams)
      n += rounds_ceil_div(v, r);
    return n;
  };
  budget = std::max(budget, static_cast<std::int64_t>(streams.size()));
  if (need(1) <= budget)
    return 1;
  // need() falls with r to streams.size() at the longest stream's length: the least r that fits
  // lies in (lo, hi].
  std::int64_t lo = 1, hi = *std::max_element(streams.begin(), streams.end());
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (need(mid) <= budget ? hi : lo) = mid;
  }
  return hi;
}

std::vector<RedistributeRound> split_into_rounds(const RedistributePieces& p, std::int64_t rounds,
                                                 const cpu::BlockStrides& src,
                                                 const cpu::BlockStrides& dst) {
  TESSERA_REQUIRE(rounds >= 1 && rounds < INT_MAX, InputError,
                  "redistribute: {} rounds are too many; raise max_buffer_bytes", rounds);
  std::vector<RedistributeRound> out(static_cast<std::size_t>(rounds));
  if (rounds == 1) { // the whole exchange at once, as the pieces are
    RedistributeRound& r = out.front();
    r.sends = p.sends;
    r.recvs = p.recvs;
    r.send_counts = p.send_counts;
    r.send_offsets = p.send_offsets;
    r.recv_counts = p.recv_counts;
    r.recv_offsets = p.recv_offsets;
    r.send_total = p.send_total;
    r.recv_total = p.recv_total;
    return out;
  }
  RoundSplitter s(rounds, src, dst);
  s.split(p.sends, p.send_counts, out, &RedistributeRound::sends, &RedistributeRound::send_counts,
          &RedistributeRound::send_offsets, &RedistributeRound::send_total);
  s.split(p.recvs, p.recv_counts, out, &RedistributeRound::recvs, &RedistributeRound::recv_counts,
          &RedistributeRound::recv_offsets, &RedistributeRound::recv_total);
  return out;
}

} // namespace tessera
