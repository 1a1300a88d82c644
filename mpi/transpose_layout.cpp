#include "mpi/transpose_layout.hpp"

namespace tessera {

TransposeLayout::TransposeLayout(const BlockDistribution& input, int this_rank)
    : in(input), out(input.transposed()), rank(this_rank) {
  const int p = in.nranks();
  const auto np = static_cast<std::size_t>(p);
  send_counts.assign(np, 0);
  send_offsets.assign(np, 0);
  recv_counts.assign(np, 0);
  recv_offsets.assign(np, 0);
  for (int s = 0; s < p; ++s) {
    // Pieces after the self piece move down by its size: the buffers do not hold it.
    const std::int64_t send_row = s < rank ? out.begin(s) : out.begin(s) - my_cols();
    const std::int64_t recv_row = s < rank ? in.begin(s) : in.begin(s) - my_rows();
    if (s == rank)
      continue;
    send_counts[s] = out.rows(s) * my_rows();
    send_offsets[s] = send_row * my_rows();
    recv_counts[s] = in.rows(s) * my_cols();
    recv_offsets[s] = recv_row * my_cols();
  }
}

std::int64_t TransposeLayout::send_offset_of(int sender, int dest) const noexcept {
  const std::int64_t row = dest < sender ? out.begin(dest) : out.begin(dest) - out.rows(sender);
  return row * in.rows(sender);
}

} // namespace tessera
