// choose_relabelling: a greedy assignment on the sparse overlap-volume matrix.
#include "mpi/redistribute_relabel.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "mpi/redistribute_pieces.hpp"

namespace tessera {

std::vector<int> choose_relabelling(const Layout& from, const Layout& to) {
  const int p = to.nranks();
  std::vector<OverlapVolume> pairs = overlap_volumes(from, to);
  std::int64_t identity_kept = 0;
  for (const OverlapVolume& v : pairs)
    identity_kept += v.src == v.dst ? v.elements : 0;
  // Largest first; ties by rank, so that every rank takes the same decisions.
  std::stable_sort(pairs.begin(), pairs.end(), [](const OverlapVolume& x, const OverlapVolume& y) {
    return x.elements > y.elements;
  });
  std::vector<int> relabelling(static_cast<std::size_t>(p), -1);
  std::vector<char> taken(static_cast<std::size_t>(p), 0);
  std::int64_t kept = 0;
  for (const OverlapVolume& v : pairs) {
    const auto s = static_cast<std::size_t>(v.src), d = static_cast<std::size_t>(v.dst);
    if (relabelling[d] >= 0 || taken[s])
      continue;
    relabelling[d] = v.src;
    taken[s] = 1;
    kept += v.elements;
  }
  if (kept <= identity_kept) {
    for (int r = 0; r < p; ++r)
      relabelling[static_cast<std::size_t>(r)] = r;
    return relabelling;
  }
  // Ranks d with nothing assigned take the free ranks: d itself where free, else in rank order.
  for (int d = 0; d < p; ++d)
    if (relabelling[static_cast<std::size_t>(d)] < 0 && !taken[static_cast<std::size_t>(d)]) {
      relabelling[static_cast<std::size_t>(d)] = d;
      taken[static_cast<std::size_t>(d)] = 1;
    }
  int next_free = 0;
  for (int d = 0; d < p; ++d) {
    if (relabelling[static_cast<std::size_t>(d)] >= 0)
      continue;
    while (taken[static_cast<std::size_t>(next_free)])
      ++next_free;
    relabelling[static_cast<std::size_t>(d)] = next_free;
    taken[static_cast<std::size_t>(next_free)] = 1;
  }
  return relabelling;
}

Layout relabel_layout(const Layout& to, const std::vector<int>& relabelling) {
  std::vector<int> owners;
  owners.reserve(static_cast<std::size_t>(to.block_rows() * to.block_cols()));
  for (std::int64_t bi = 0; bi < to.block_rows(); ++bi)
    for (std::int64_t bj = 0; bj < to.block_cols(); ++bj)
      owners.push_back(relabelling[static_cast<std::size_t>(to.block_owner(bi, bj))]);
  return Layout::grid(to.row_splits(), to.col_splits(), std::move(owners), to.nranks(),
                      to.storage());
}

} // namespace tessera
