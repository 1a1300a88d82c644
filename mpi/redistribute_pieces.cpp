// Intersecting two layouts: merge their split points, then walk the cells in row-major order.
#include "mpi/redistribute_pieces.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

namespace tessera {

namespace {

// One interval of the merged split points, with the block of each layout it lies in.
struct MergedInterval {
  std::int64_t begin = 0, end = 0;
  std::int64_t from_block = 0, to_block = 0;
};

std::vector<MergedInterval> merge_split_points(const std::vector<std::int64_t>& from,
                                               const std::vector<std::int64_t>& to) {
  std::vector<std::int64_t> points;
  std::set_union(from.begin(), from.end(), to.begin(), to.end(), std::back_inserter(points));
  points.erase(std::unique(points.begin(), points.end()), points.end());
  std::vector<MergedInterval> out;
  std::size_t a = 0, b = 0; // the blocks of `from` and `to` holding the current interval
  for (std::size_t k = 0; k + 1 < points.size(); ++k) {
    const std::int64_t lo = points[k], hi = points[k + 1];
    while (from[a + 1] <= lo)
      ++a;
    while (to[b + 1] <= lo)
      ++b;
    out.push_back({lo, hi, static_cast<std::int64_t>(a), static_cast<std::int64_t>(b)});
  }
  return out;
}

std::int64_t piece_offset(const Layout& l, int rank, std::int64_t bi, std::int64_t bj,
                          std::int64_t i, std::int64_t j) {
  const std::int64_t row =
      l.block_local_row(bi, bj) + i - l.row_splits()[static_cast<std::size_t>(bi)];
  const std::int64_t col =
      l.block_local_col(bi, bj) + j - l.col_splits()[static_cast<std::size_t>(bj)];
  return l.local_offset(rank, row, col);
}

} // namespace

RedistributePieces intersect_layouts(const Layout& from, const Layout& to, int rank) {
  const auto n = static_cast<std::size_t>(from.nranks());
  std::vector<std::vector<RedistributePiece>> sends(n), recvs(n);
  RedistributePieces p;
  if (!from.global().empty()) {
    const auto rows = merge_split_points(from.row_splits(), to.row_splits());
    const auto cols = merge_split_points(from.col_splits(), to.col_splits());
    for (const MergedInterval& r : rows)
      for (const MergedInterval& c : cols) {
        const int src = from.block_owner(r.from_block, c.from_block);
        const int dst = to.block_owner(r.to_block, c.to_block);
        if (src != rank && dst != rank)
          continue;
        RedistributePiece piece{r.end - r.begin, c.end - c.begin, 0, 0, 0};
        if (src == rank)
          piece.src_offset = piece_offset(from, rank, r.from_block, c.from_block, r.begin, c.begin);
        if (dst == rank)
          piece.dst_offset = piece_offset(to, rank, r.to_block, c.to_block, r.begin, c.begin);
        if (src == rank && dst == rank)
          p.local.push_back(piece);
        else if (src == rank)
          sends[static_cast<std::size_t>(dst)].push_back(piece);
        else
          recvs[static_cast<std::size_t>(src)].push_back(piece);
      }
  }
  auto flatten = [n](std::vector<std::vector<RedistributePiece>>& per_peer,
                     std::vector<RedistributePiece>& out, std::vector<std::int64_t>& counts,
                     std::vector<std::int64_t>& offsets) {
    counts.assign(n, 0);
    offsets.assign(n, 0);
    std::int64_t at = 0;
    for (std::size_t peer = 0; peer < n; ++peer) {
      offsets[peer] = at;
      for (RedistributePiece& piece : per_peer[peer]) {
        piece.buffer_offset = at;
        at += piece.rows * piece.cols;
        out.push_back(piece);
      }
      counts[peer] = at - offsets[peer];
    }
    return at;
  };
  p.send_total = flatten(sends, p.sends, p.send_counts, p.send_offsets);
  p.recv_total = flatten(recvs, p.recvs, p.recv_counts, p.recv_offsets);
  for (const RedistributePiece& piece : p.local)
    p.local_total += piece.rows * piece.cols;
  return p;
}

std::vector<OverlapVolume> overlap_volumes(const Layout& from, const Layout& to) {
  std::map<std::pair<int, int>, std::int64_t> volume;
  if (!from.global().empty()) {
    const auto rows = merge_split_points(from.row_splits(), to.row_splits());
    const auto cols = merge_split_points(from.col_splits(), to.col_splits());
    for (const MergedInterval& r : rows)
      for (const MergedInterval& c : cols) {
        const std::int64_t n = (r.end - r.begin) * (c.end - c.begin);
        if (n > 0)
          volume[{from.block_owner(r.from_block, c.from_block),
                  to.block_owner(r.to_block, c.to_block)}] += n;
      }
  }
  std::vector<OverlapVolume> out;
  out.reserve(volume.size());
  for (const auto& [pair, n] : volume)
    out.push_back({pair.first, pair.second, n});
  return out;
}

} // namespace tessera
