// The optional relabelling of a redistribution's target ranks (RedistributeOptions::relabel):
// B's layout with its owners permuted so that each rank keeps as much of its own part of op(A)
// as it can, and sends the rest. A target that differs from the source by a permutation of
// ranks then moves nothing.
#pragma once

#include <vector>

#include <tessera/layout.hpp>

namespace tessera {

// relabelling[d]: the rank that takes over what `to` gives rank d. It maximises the elements
// kept in place, sum over d of overlap(relabelling[d], d), greedily: pairs (s, d) in decreasing
// overlap, each taken while both s and d are free, the ranks left over paired in rank order.
// Greedy is not always optimal; where it keeps no more than the identity, the identity is
// returned, so a relabelled plan never sends more in all than an unrelabelled one. The same on
// every rank (a function of the layouts alone).
std::vector<int> choose_relabelling(const Layout& from, const Layout& to);

// `to` with block owner d replaced by relabelling[d]. Local blocks keep their shapes (a rank holds
// exactly what d held, arranged alike) and become tight (leading dimension 0).
Layout relabel_layout(const Layout& to, const std::vector<int>& relabelling);

} // namespace tessera
