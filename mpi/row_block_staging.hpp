// A matrix in any layout brought to row blocks (BlockDistribution's split) over the same ranks,
// so that the row-block kernels and their fixed order of summation serve every layout: the
// same rows reach the same rank whatever layout the matrix came in, hence the same bits.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>

#include <tessera/dtype.hpp>
#include <tessera/layout.hpp>
#include <tessera/redistribute_plan.hpp>

#include "core/aligned_buffer.hpp"

namespace tessera::mpi {

// Whether `l` is row blocks as BlockDistribution splits them (row-major local blocks, rank r
// holding the r-th block), its leading dimension aside.
bool is_row_blocks(const Layout& l);

class RowBlockStaging {
public:
  // Collective over comm (layout.nranks() must be its size). Holds one row block of this rank
  // (rows × cols elements of dtype) unless the layout is row blocks with tight row-major local
  // blocks on every rank: then nothing moves and nothing is held.
  RowBlockStaging(const Layout& layout, DType dtype, MPI_Comm comm);

  // False when the local blocks already are the row blocks.
  bool moves() const noexcept { return plan_.has_value(); }
  // Elements of this rank's local block in the layout (what execute reads).
  std::int64_t local_elements() const noexcept { return local_elements_; }

  // Collective. This rank's row block of the matrix whose local block in the layout is
  // `block` (null where the rank holds nothing): `block` itself, or the held copy.
  const void* rows(const void* block);

private:
  std::optional<RedistributePlan> plan_;
  AlignedBuffer rows_;
  std::int64_t local_elements_ = 0;
};

} // namespace tessera::mpi
