// The geometry of a distributed permutation of dimensions (permute_slabs.hpp).
#include "mpi/permute_slabs.hpp"

#include <algorithm>

#include "core/permute_layout.hpp"

namespace tessera {

namespace {

std::int64_t slabs_product(std::span<const std::int64_t> v) {
  std::int64_t p = 1;
  for (const std::int64_t n : v)
    p *= n;
  return p;
}

} // namespace

PermuteSlabs::PermuteSlabs(std::span<const std::int64_t> global, std::span<const int> order,
                           int this_rank, int size)
    : shape(global.begin(), global.end()), out_shape(permuted_shape(global, order)),
      axes(order.begin(), order.end()), rank(this_rank), nranks(size), in({shape[0], 1}, size),
      out({out_shape[0], 1}, size) {
  slab_shape = shape;
  slab_shape[0] = in.rows(rank);
  out_block_shape = out_shape;
  out_block_shape[0] = out.rows(rank);
  in_elements = slabs_product(slab_shape);
  out_elements = slabs_product(out_block_shape);
  exchange = nranks > 1 && axes[0] != 0;
  if (!exchange)
    return;
  const auto d = static_cast<std::size_t>(axes[0]);
  const auto k0 = static_cast<std::size_t>(std::find(axes.begin(), axes.end(), 0) - axes.begin());
  std::int64_t rest = 1; // the lengths of every input dimension but 0 and d
  for (std::size_t j = 1; j < shape.size(); ++j)
    if (j != d)
      rest *= shape[j];
  inner = slabs_product(std::span(out_shape).subspan(k0 + 1));
  outer = out.rows(rank) * slabs_product(std::span(out_shape).subspan(1, k0 - 1));
  dst_pitch = shape[0] * inner;
  const auto p = static_cast<std::size_t>(nranks);
  send_counts.assign(p, 0);
  send_offsets.assign(p, 0);
  recv_counts.assign(p, 0);
  recv_offsets.assign(p, 0);
  for (int q = 0; q < nranks; ++q) {
    const auto s = static_cast<std::size_t>(q);
    // Rows [b_q, e_q) of the permuted slab, whose rows are d's indices.
    send_offsets[s] = out.begin(q) * in.rows(rank) * rest;
    recv_offsets[s] = recv_elements;
    if (q == rank)
      continue;
    send_counts[s] = out.rows(q) * in.rows(rank) * rest;
    recv_counts[s] = out.rows(rank) * in.rows(q) * rest;
    recv_elements += recv_counts[s];
  }
}

} // namespace tessera
