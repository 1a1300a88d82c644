// The geometry of a distributed permutation of dimensions (PermutePlan), shared by every
// backend's engine. The input is split along its dimension 0 (A rows per rank in blocks), the
// output along its own dimension 0, which is input dimension d = axes[0].
//
// When d != 0 and there are peers, each rank permutes its whole input slab (a_r × the rest) into
// output order: the permuted slab's outermost dimension is d, so the piece that peer s needs
// (its block [b_s, e_s) of d) is one contiguous run of it, already in output order. No packing
// beyond that one local permutation; the send buffer is the permuted slab itself.
//
// The piece from rank q is the box of the receiver's output block that covers all of every
// output dimension but k0 (where input dimension 0 went, axes[k0] == 0), along which it covers
// q's input rows [a_q, a_q + rows_q). Row-major, it is `outer` runs of run(q) = rows_q · inner
// elements (inner: the product of the output dimensions after k0), which land `dst_pitch`
// elements apart at dst_offset(q): one strided 2-D copy per piece. The self piece is copied
// from the send buffer the same way, without MPI (its exchange counts are 0).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/block_distribution.hpp"

namespace tessera {

struct PermuteSlabs {
  PermuteSlabs() = default;
  // A checked permutation (check_permutation) of an array whose element count fits int64.
  PermuteSlabs(std::span<const std::int64_t> shape, std::span<const int> axes, int rank,
               int nranks);

  std::vector<std::int64_t> shape, out_shape; // global
  std::vector<int> axes;
  int rank = 0, nranks = 1;
  BlockDistribution in, out;            // of dimension 0 of the input and of the output ({n, 1}, P)
  std::vector<std::int64_t> slab_shape; // this rank's input block
  std::vector<std::int64_t> out_block_shape; // this rank's output block
  std::int64_t in_elements = 0, out_elements = 0;
  bool exchange = false; // peers and d != 0; else each rank permutes its slab into its output

  // With `exchange`: segments of the send buffer (the permuted slab) and of the receive buffer
  // per peer, in elements. The self counts are 0; send_offsets[rank] is where the self piece
  // starts all the same.
  std::vector<std::int64_t> send_counts, send_offsets, recv_counts, recv_offsets;
  std::int64_t recv_elements = 0;
  std::int64_t outer = 0, inner = 0, dst_pitch = 0;

  std::int64_t run(int q) const noexcept { return in.rows(q) * inner; }
  std::int64_t dst_offset(int q) const noexcept { return in.begin(q) * inner; }
};

} // namespace tessera
