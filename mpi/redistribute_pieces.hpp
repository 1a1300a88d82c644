// The geometry of a redistribution: the rectangles of a global matrix that change hands, found
// by intersecting two layouts' block boundaries (never element by element).
//
// `from` is the layout op(A) is read through (A's window, transposed for op ≠ none), `to` is
// B's window; both have the same global shape. The merged row and column split points cut the
// matrix into cells that lie in one block of each layout, so each cell has one source rank and
// one destination rank. Cells are visited in one global order on every rank, so a sender and a
// receiver list the pieces between them alike, and their positions in the buffers agree.
#pragma once

#include <cstdint>
#include <vector>

#include <tessera/layout.hpp>

namespace tessera {

// One rectangle: where it starts in the source and destination local blocks and, for the
// pieces that travel, in the packed buffer. Packed in the source's storage order.
struct RedistributePiece {
  std::int64_t rows = 0, cols = 0;
  std::int64_t src_offset = 0; // element offset in this rank's source block (senders, local)
  std::int64_t dst_offset = 0; // in this rank's destination block (receivers, local)
  std::int64_t buffer_offset = 0;
};

struct RedistributePieces {
  std::vector<RedistributePiece> sends; // grouped by destination, in rank order
  std::vector<RedistributePiece> recvs; // grouped by source, in rank order
  std::vector<RedistributePiece> local; // source and destination both this rank
  // Elements per peer and their offsets in the send and receive buffers (zero for this rank).
  std::vector<std::int64_t> send_counts, send_offsets, recv_counts, recv_offsets;
  std::int64_t send_total = 0, recv_total = 0, local_total = 0;
};

RedistributePieces intersect_layouts(const Layout& from, const Layout& to, int rank);

// Elements of the matrix that rank s holds in `from` and rank d in `to`, for every pair (s, d)
// that shares any: entries (s, d, count), sorted by s then d. The same on every rank.
struct OverlapVolume {
  int src = 0, dst = 0;
  std::int64_t elements = 0;
};
std::vector<OverlapVolume> overlap_volumes(const Layout& from, const Layout& to);

} // namespace tessera
