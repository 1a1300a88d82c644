// Any layout to and from a 2-D dataset: the dataset moves in slices of whole rows, each split in
// row blocks over the ranks (the collective hyperslab transfers of io/h5_matrix.hpp) and
// redistributed into or out of the layout's window of those rows. One slice (the whole matrix)
// unless a memory limit asks for smaller ones.
#include "io/h5_layout.hpp"

#include <algorithm>

#include <tessera/redistribute_plan.hpp>

#include "core/aligned_buffer.hpp"
#include "core/block_distribution.hpp"
#include "core/throw.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"

namespace tessera::io {
namespace {

// What a rank's local block must satisfy, checked on every rank and agreed on before the first
// collective step that would trip over it (the plan's own checks are per rank).
void check_layout(const Layout& layout, MPI_Comm comm, const void* block, const char* what,
                  const std::string& dataset) {
  const int size = mpi::comm_size(comm);
  const int rank = mpi::comm_rank(comm);
  mpi::collectively(comm, [&] {
    TESSERA_REQUIRE(layout.nranks() == size, InputError,
                    "h5::{} {}: layout over {} ranks on a communicator of {}", what, dataset,
                    layout.nranks(), size);
    const Shape local = layout.local_shape(rank);
    if (local.empty())
      return;
    const std::int64_t line = layout.storage() == StorageOrder::RowMajor ? local.cols : local.rows;
    TESSERA_REQUIRE(layout.leading_dimension(rank) >= line, InputError,
                    "h5::{} {}: leading dimension {} of rank {}'s {} local block, expected >= {}",
                    what, dataset, layout.leading_dimension(rank), rank, local.str(), line);
    TESSERA_REQUIRE(block != nullptr, InputError,
                    "h5::{} {}: rank {} holds a {} local block but passed a null pointer", what,
                    dataset, rank, local.str());
  });
}

// Rows per slice: the whole matrix without a limit, else as many as keep the slice's row block
// and the plan's two exchange buffers under the limit, and at least one row per rank. One buffer
// is at most a row block; the other is this rank's share of the layout's window, about a row
// block too where the layout spreads the matrix evenly (the case the limit is sized for).
std::int64_t slice_rows(Shape global, DType dtype, int size, std::int64_t memory_limit) {
  if (memory_limit <= 0 || global.cols == 0)
    return std::max<std::int64_t>(global.rows, 1);
  const auto row_bytes = static_cast<std::int64_t>(dtype_size(dtype)) * global.cols;
  const std::int64_t per_rank = std::max<std::int64_t>(memory_limit / (3 * row_bytes), 1);
  return std::max<std::int64_t>(per_rank * size, 1);
}

// This rank's staging row block, sized for the largest slice (the first: the others are
// equal or smaller), allocated collectively.
AlignedBuffer staging(Shape global, std::int64_t rows, DType dtype, MPI_Comm comm) {
  const BlockDistribution first({std::min(rows, global.rows), global.cols}, mpi::comm_size(comm));
  const int rank = mpi::comm_rank(comm);
  AlignedBuffer buf;
  mpi::collectively(comm, [&] {
    buf =
        AlignedBuffer(static_cast<std::size_t>(first.rows(rank) * global.cols) * dtype_size(dtype),
                      "an HDF5 row block");
  });
  return buf;
}

} // namespace

void read_layout(const H5File& f, const std::string& dataset, const Layout& layout, DType dtype,
                 void* block, std::int64_t memory_limit) {
  const MPI_Comm comm = f.comm();
  check_layout(layout, comm, block, "read_layout", dataset);
  const DatasetInfo info = inspect_dataset(f, dataset);
  if (info.shape != layout.global())
    TESSERA_THROW(InputError, "dataset {} in '{}' has shape {}, the layout {}", dataset, f.path(),
                  info.shape.str(), layout.global().str());
  const Shape global = layout.global();
  const int size = mpi::comm_size(comm);
  const int rank = mpi::comm_rank(comm);
  const std::int64_t step = slice_rows(global, dtype, size, memory_limit);
  const AlignedBuffer buf = staging(global, step, dtype, comm);
  for (std::int64_t r0 = 0; r0 < global.rows; r0 += step) {
    const Shape slice{std::min(step, global.rows - r0), global.cols};
    const BlockDistribution dist(slice, size);
    read_block(f, dataset, {r0 + dist.begin(rank), dist.rows(rank), 0, global.cols}, dtype,
               buf.data());
    RedistributePlan plan(Layout::row_blocks(slice, size), layout, dtype, comm,
                          {.b_row = r0, .rows = slice.rows, .cols = slice.cols});
    plan.execute(buf.data(), block);
  }
}

void write_layout(H5File& f, const std::string& dataset, const Layout& layout, DType dtype,
                  const void* block, const WriteOptions& options, std::int64_t memory_limit) {
  const MPI_Comm comm = f.comm();
  check_layout(layout, comm, block, "write_layout", dataset);
  const Shape global = layout.global();
  create_dataset(f, dataset, global, dtype, options);
  const int size = mpi::comm_size(comm);
  const int rank = mpi::comm_rank(comm);
  const std::int64_t step = slice_rows(global, dtype, size, memory_limit);
  const AlignedBuffer buf = staging(global, step, dtype, comm);
  for (std::int64_t r0 = 0; r0 < global.rows; r0 += step) {
    const Shape slice{std::min(step, global.rows - r0), global.cols};
    const BlockDistribution dist(slice, size);
    RedistributePlan plan(layout, Layout::row_blocks(slice, size), dtype, comm,
                          {.a_row = r0, .rows = slice.rows, .cols = slice.cols});
    plan.execute(block, buf.data());
    write_block(f, dataset, {r0 + dist.begin(rank), dist.rows(rank), 0, global.cols}, dtype,
                buf.data());
  }
}

} // namespace tessera::io
