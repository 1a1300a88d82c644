// Random layouts and local blocks for the redistribution tests, drawn alike on every rank (the
// generator is seeded alike): row, column and 2-D blocks, block-cyclic (blocks 1 to 64 and
// awkward sizes, grids up to 3 × 2 and 2 × 3, any source process, padded leading dimensions,
// ranks outside the grid) and general grids.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include <tessera/layout.hpp>

namespace tessera::test {

inline int comm_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}
inline int comm_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline std::int64_t pick(std::mt19937_64& g, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(g);
}

inline StorageOrder random_storage(std::mt19937_64& g) {
  return pick(g, 0, 1) ? StorageOrder::RowMajor : StorageOrder::ColMajor;
}

// Split points of n into random pieces, empty ones included.
inline std::vector<std::int64_t> random_splits(std::mt19937_64& g, std::int64_t n) {
  std::vector<std::int64_t> s{0, n};
  const std::int64_t extra = pick(g, 0, 4);
  for (std::int64_t k = 0; k < extra; ++k)
    s.push_back(pick(g, 0, n));
  std::sort(s.begin(), s.end());
  return s;
}

// A random layout of `shape` over p ranks (the same on every rank: g is seeded alike).
inline Layout random_layout(std::mt19937_64& g, Shape shape, int p) {
  switch (pick(g, 0, 4)) {
  case 0:
    return Layout::row_blocks(shape, p, random_storage(g));
  case 1:
    return Layout::col_blocks(shape, p, random_storage(g));
  case 2: {
    const int pr = static_cast<int>(pick(g, 1, p));
    const int pc = static_cast<int>(pick(g, 1, p / pr));
    return Layout::blocks_2d(shape, pr, pc,
                             pick(g, 0, 1) ? GridOrder::RowMajor : GridOrder::ColMajor,
                             random_storage(g), p);
  }
  case 3: {
    BlockCyclicSpec s;
    s.global = shape;
    static constexpr std::int64_t sizes[] = {1, 2, 3, 5, 7, 13, 17, 31, 64};
    s.mb = sizes[pick(g, 0, 8)];
    s.nb = sizes[pick(g, 0, 8)];
    s.pr = static_cast<int>(pick(g, 1, std::min(p, 3)));
    s.pc = static_cast<int>(pick(g, 1, std::min(p / s.pr, 3)));
    s.rsrc = static_cast<int>(pick(g, 0, s.pr - 1));
    s.csrc = static_cast<int>(pick(g, 0, s.pc - 1));
    s.grid_order = pick(g, 0, 1) ? GridOrder::RowMajor : GridOrder::ColMajor;
    s.nranks = p;
    s.storage = random_storage(g);
    // One leading dimension on every rank, as the reference needs: the largest local extent
    // plus some padding.
    const Layout tight = Layout::block_cyclic(s);
    std::int64_t ld = 1;
    for (int r = 0; r < p; ++r)
      ld = std::max(ld, tight.leading_dimension(r));
    s.lld = ld + pick(g, 0, 3);
    return Layout::block_cyclic(s);
  }
  default: {
    auto rows = random_splits(g, shape.rows);
    auto cols = random_splits(g, shape.cols);
    std::vector<int> owners((rows.size() - 1) * (cols.size() - 1));
    for (int& o : owners)
      o = static_cast<int>(pick(g, 0, p - 1));
    return Layout::grid(std::move(rows), std::move(cols), std::move(owners), p, random_storage(g));
  }
  }
}

// Exact in every type: small integers and halves, so any evaluation order gives the same bits.
template <class T>
T element_value(std::int64_t k, int salt) {
  const double re = static_cast<double>((k * 7 + salt) % 61) - 30.0;
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(re);
  else
    return T(static_cast<typename T::value_type>(re),
             static_cast<typename T::value_type>((k * 3 + salt) % 17) - 8.5f);
}

template <class T>
std::vector<T> local_block(const Layout& l, int rank, int salt) {
  std::vector<T> v(static_cast<std::size_t>(l.local_extent(rank)));
  for (std::size_t k = 0; k < v.size(); ++k)
    v[k] = element_value<T>(static_cast<std::int64_t>(k) + rank * 1000, salt);
  return v;
}

} // namespace tessera::test
