// The canonical order of the Sum family (core/reduction.hpp) across ranks, for Axis::All and
// Axis::Cols. Global 64-row blocks do not respect rank boundaries, so a block may begin on one
// rank and end on a later one. Each rank first computes, in parallel and without waiting, the
// partials of the blocks that begin on it; then a running state passes along the chain
// rank 0 → 1 → … → P-1: the fold of the closed super-blocks, that of the super-block still open
// and the partial of the block still open, per op and per column. A rank continues the open block
// with its first rows, folds its own block partials into the total in order, and hands on; the last
// rank closes the open block and broadcasts. Every addition thus happens in the serial order,
// whatever the number of ranks or threads. Along Cols the chain also carries Min, Max and NormInf
// (their folds start from their identities), so that every op of a plan comes from one read of the
// block.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "core/block_distribution.hpp"
#include "core/reduction.hpp"
#include "mpi/reduce_engine.hpp"

namespace tessera::mpi {

// This rank's rows [begin, end) cut by the global blocks, in local row numbers:
//   [0, head_end)          continue a block begun on an earlier rank (head_closes: and end it)
//   [head_end, body_end)   whole blocks
//   [body_end, rows)       a block begun here that a later rank continues (the tail)
struct RowBlockCut {
  std::int64_t rows = 0;
  std::int64_t head_end = 0;
  std::int64_t body_end = 0;
  bool head_closes = false;

  RowBlockCut() = default;
  RowBlockCut(std::int64_t begin, std::int64_t end);
  std::int64_t body_blocks() const noexcept { return (body_end - head_end) / kReduceBlockRows; }
  bool has_tail() const noexcept { return body_end < rows; }
};

class CanonicalChain {
public:
  CanonicalChain() = default;
  // axis is All or Cols.
  CanonicalChain(MPI_Comm comm, const BlockDistribution& dist, Axis axis, std::size_t element_size);

  // Un-finalized values of each op in `ops` (kernel ops: Sum, Norm1 or Norm2 for All, any but
  // Mean for Cols), 1 (All) or cols (Cols) each, identical on every rank. Collective. For All, the
  // caller may pass this rank's row values of each op (engine.reduce_rows), computed with other
  // ops in one read; otherwise they are computed here, all ops in one read.
  std::vector<std::vector<double>>
  run(ReduceEngine& engine, const std::vector<Op>& ops, const void* block,
      const std::vector<std::vector<double>>* row_values = nullptr) const;

private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  Axis axis_ = Axis::All;
  std::int64_t cols_ = 0, global_rows_ = 0, first_row_ = 0;
  std::size_t element_size_ = 0;
  RowBlockCut cut_;
};

} // namespace tessera::mpi
