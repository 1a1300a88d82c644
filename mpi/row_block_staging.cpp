// RowBlockStaging (mpi/row_block_staging.hpp): a RedistributePlan to Layout::row_blocks and the
// buffer it writes, unless there is nothing to move.
#include "mpi/row_block_staging.hpp"

#include "core/block_distribution.hpp"
#include "mpi/agreement.hpp"
#include "mpi/collectives.hpp"
#include "mpi/communicator.hpp"

namespace tessera::mpi {

bool is_row_blocks(const Layout& l) {
  const Layout rows = Layout::row_blocks(l.global(), l.nranks());
  if (l.storage() != StorageOrder::RowMajor || l.row_splits() != rows.row_splits() ||
      l.col_splits() != rows.col_splits())
    return false;
  for (std::int64_t bi = 0; bi < l.block_rows(); ++bi)
    if (l.block_owner(bi, 0) != rows.block_owner(bi, 0))
      return false;
  return true;
}

RowBlockStaging::RowBlockStaging(const Layout& layout, DType dtype, MPI_Comm comm) {
  const int rank = comm_rank(comm);
  local_elements_ = layout.local_shape(rank).size();
  const Shape& g = layout.global();
  // The leading dimension is each rank's own: whether every rank's is tight takes a vote.
  const bool tight = layout.leading_dimension(rank) == layout.local_shape(rank).cols;
  if (all_ranks(comm, is_row_blocks(layout) && tight))
    return;
  const Layout target = Layout::row_blocks(g, layout.nranks());
  plan_.emplace(layout, target, dtype, comm);
  const BlockDistribution dist(g, layout.nranks());
  collectively(comm, [&] {
    rows_ = AlignedBuffer(static_cast<std::size_t>(dist.local_size(rank)) * dtype_size(dtype),
                          "the row block of a reduction over a layout");
  });
}

const void* RowBlockStaging::rows(const void* block) {
  if (!plan_)
    return block;
  plan_->execute(block, rows_.data());
  return rows_.data();
}

} // namespace tessera::mpi
