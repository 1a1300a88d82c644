// The geometry of a distributed transpose, shared by every backend's engine.
//
// Rank r holds the m_r × N block of rows [b_r, e_r) of A. The piece it sends to rank s is
// A[b_r:e_r, b'_s:e'_s] (columns owned by s in Aᵀ), m_r × n_s. The sender transposes it, so a
// piece travels as an n_s × m_r row-major block, and rank s places it at columns [b_r, e_r) of
// its n_s × M output rows.
//
// The self piece never goes through a buffer: it is transposed straight into the output. The
// buffers hold the remote pieces only, in rank order:
//   send buffer, (N - n_r) × m_r: the transpose of A_local's columns outside [b'_r, e'_r), so
//     the piece for s is its rows [b'_s, e'_s) (shifted down by n_r for s > r). Two transposes,
//     of the columns left and right of the self piece, pack every piece at once.
//   receive buffer, (M - m_r) × n_r: the piece from q at rows [b_q, e_q) of the same kind.
#pragma once

#include <cstdint>
#include <vector>

#include "core/block_distribution.hpp"

namespace tessera {

struct TransposeLayout {
  BlockDistribution in;  // M × N over P ranks
  BlockDistribution out; // N × M over P ranks
  int rank = 0;

  TransposeLayout() = default;
  TransposeLayout(const BlockDistribution& input, int this_rank);

  int nranks() const noexcept { return in.nranks(); }
  std::int64_t M() const noexcept { return in.global().rows; }
  std::int64_t N() const noexcept { return in.global().cols; }
  std::int64_t my_rows() const noexcept { return in.rows(rank); }  // m_r
  std::int64_t my_cols() const noexcept { return out.rows(rank); } // n_r

  // Elements per peer and their offsets in the send / receive buffers; zero for this rank
  // (the self piece is not exchanged).
  std::vector<std::int64_t> send_counts, send_offsets, recv_counts, recv_offsets;
  // Where rank `sender` keeps the piece for rank `dest` in its send buffer (elements), so that
  // a receiver can find its piece in a sender's shared-memory segment.
  std::int64_t send_offset_of(int sender, int dest) const noexcept;
  // Sizes of the send and receive buffers, in elements.
  std::int64_t send_elements() const noexcept { return (N() - my_cols()) * my_rows(); }
  std::int64_t recv_elements() const noexcept { return (M() - my_rows()) * my_cols(); }
};

} // namespace tessera
