// The chunk geometry of the out-of-core transpose (out_of_core_transpose.cpp explains the
// column panels and row slabs): which hyperslabs each rank reads and writes per chunk, what a
// chunk costs in memory, and the largest chunks that fit the memory limit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/block_distribution.hpp"
#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "io/h5_matrix.hpp"
#include "ops/out_of_core.hpp"
#include "ops/out_of_core_pipeline.hpp"

namespace tessera::ops::detail {

struct TransposeGeometry {
  Shape shape; // input M × N
  DType dtype = DType::f64;
  int nranks = 1;
  ChunkShape kind = ChunkShape::RowSlabs;
  std::int64_t extent = 0; // H input rows (row slabs) or W input columns (column panels) per chunk
  std::int64_t chunks = 0;
  // Column panels on several ranks: each rank reads all M rows of its own columns of the panel
  // and transposes them alone, with no exchange between ranks (the output rows it writes are the
  // same as with the exchange). Off: the panel's rows are spread over the ranks and a
  // TransposePlan across them moves each rank's columns to it.
  bool local = false;

  bool panels() const { return kind == ChunkShape::ColumnPanels; }
  // The input columns M × [start, start + size) or rows [start, start + size) × N of chunk c.
  std::int64_t start(std::int64_t c) const { return c * extent; }
  std::int64_t size(std::int64_t c) const {
    return std::min(extent, (panels() ? shape.cols : shape.rows) - start(c));
  }
  std::int64_t row0(std::int64_t c) const { return panels() ? 0 : start(c); }
  std::int64_t col0(std::int64_t c) const { return panels() ? start(c) : 0; }
  // The input block of `lines` whole columns (rows); block(c) is chunk c's, the matrix one
  // TransposePlan transposes.
  Shape block_of(std::int64_t lines) const {
    return panels() ? Shape{shape.rows, lines} : Shape{lines, shape.cols};
  }
  Shape block(std::int64_t c) const { return block_of(size(c)); }
  BlockDistribution slab(std::int64_t c) const { return {block(c), nranks}; }
  // local: the panel's columns over the ranks, and the block rank r transposes alone.
  BlockDistribution part(std::int64_t c) const { return {Shape{size(c), shape.rows}, nranks}; }
  Shape local_block(std::int64_t c, int rank) const { return {shape.rows, part(c).rows(rank)}; }
  // Rank r reads its rows of the block (local: its columns of the panel) and, after the plan,
  // writes its rows of the block's transpose: output rows col0 + [b', e') × output columns
  // [row0, row0 + block rows).
  io::Hyperslab read_slab(std::int64_t c, int rank) const {
    if (local)
      return {0, shape.rows, col0(c) + part(c).begin(rank), part(c).rows(rank)};
    const BlockDistribution d = slab(c);
    return {row0(c) + d.begin(rank), d.rows(rank), col0(c), d.global().cols};
  }
  io::Hyperslab write_slab(std::int64_t c, int rank) const {
    const BlockDistribution d = slab(c).transposed();
    return {col0(c) + d.begin(rank), d.rows(rank), row0(c), d.global().cols};
  }
};

// Bytes one rank needs for chunks of input `block` shape: depth + 1 input and output buffers,
// plus the plan's send and receive buffers (mpi/transpose_layout.hpp).
struct Footprint {
  std::size_t in = 0, out = 0, exchange = 0;
  std::size_t total(int buffers) const { return buffers * (in + out) + exchange; }
};
Footprint footprint(Shape block, int nranks, int rank, std::size_t es);

// What HDF5 holds per rank for compressed output written in chunks of extent e (0 uncompressed),
// for the chunk shape output_layout() chooses with that extent.
std::size_t hdf5_staging(const TransposeGeometry& g, std::int64_t e, const OutOfCoreOptions& o);

// The largest chunks whose buffers (and HDF5's staging) fit ctx's memory limit, or those asked
// for; ResourceError when even one line per chunk does not fit.
TransposeGeometry plan_geometry(const io::DatasetInfo& info, int nranks,
                                const PipelineContext& ctx);

// The output's HDF5 layout for chunks of g.extent lines (see the definition for why).
io::WriteOptions output_layout(const TransposeGeometry& g, const OutOfCoreOptions& o);

} // namespace tessera::ops::detail
