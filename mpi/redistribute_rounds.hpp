// A redistribution's exchange split into rounds, so that its send and receive buffers stay within
// a bound (RedistributeOptions::max_buffer_bytes: by default one local block).
//
// What rank s sends rank d is one packed stream of V elements (the pieces between them in their
// common order). With R rounds, round k carries elements [k·V/R, (k+1)·V/R) of every stream,
// rounded down: both ends compute the same cut from V and R alone, so no message says where a
// round ends. Where a cut falls inside a piece, the piece is cut too, into at most three
// rectangles (a partial line, whole lines, a partial line, lines being rows when the source is
// row-major and columns otherwise), each contiguous in the stream; every element is still
// written once, by the same arithmetic, so the result does not depend on R.
//
// A rank's buffers for R rounds hold at most sum over its peers of ceil(V/R) elements, which
// falls with R to one element per peer: that is the floor under any bound.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/redistribute_copy.hpp"
#include "mpi/redistribute_pieces.hpp"

namespace tessera {

struct RedistributeRound {
  // Buffer offsets are within this round's buffers; grouped by peer in rank order.
  std::vector<RedistributePiece> sends, recvs;
  std::vector<std::int64_t> send_counts, send_offsets, recv_counts, recv_offsets;
  std::int64_t send_total = 0, recv_total = 0;
};

// The fewest rounds that keep this rank's send plus receive buffers within `budget` elements, or
// within one element per peer where the budget is smaller than that. 1 when the whole exchange
// fits.
std::int64_t rounds_needed(const RedistributePieces& p, std::int64_t budget);

// The pieces' sends and receives in `rounds` rounds (the same count on every rank). src and dst:
// the strides of this rank's source and destination blocks, for the offsets of cut pieces.
std::vector<RedistributeRound> split_into_rounds(const RedistributePieces& p, std::int64_t rounds,
                                                 const cpu::BlockStrides& src,
                                                 const cpu::BlockStrides& dst);

} // namespace tessera
