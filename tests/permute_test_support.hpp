// What the permutation tests share: every permutation of a rank's dimensions.
#pragma once

#include <algorithm>
#include <numeric>
#include <vector>

namespace tessera::test {

// Output dimension k is input dimension axes[k], as cpu::permute takes them.
using Axes = std::vector<int>;

// All rank! permutations of 0 … rank - 1, in lexicographic order.
inline std::vector<Axes> all_permutations(int rank) {
  Axes a(static_cast<std::size_t>(rank));
  std::iota(a.begin(), a.end(), 0);
  std::vector<Axes> all;
  do {
    all.push_back(a);
  } while (std::next_permutation(a.begin(), a.end()));
  return all;
}

} // namespace tessera::test
