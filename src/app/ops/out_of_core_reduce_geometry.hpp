// The chunk geometry of the out-of-core reductions (out_of_core_reduce.cpp explains the slabs
// of rows and, along columns, the column stripes): which hyperslab each rank reads per chunk,
// and the tallest slabs that fit the memory limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/block_distribution.hpp"
#include "core/dtype.hpp"
#include "core/reduction.hpp"
#include "core/shape.hpp"
#include "io/h5_matrix.hpp"
#include "ops/out_of_core.hpp"
#include "ops/out_of_core_pipeline.hpp"

namespace tessera::ops::detail {

struct ReduceGeometry {
  Shape shape;
  DType dtype = DType::f64;
  Axis axis = Axis::All;
  int nranks = 1;
  std::int64_t height = 0; // rows per chunk
  std::int64_t chunks = 0;

  std::int64_t row0(std::int64_t c) const { return c * height; }
  std::int64_t rows(std::int64_t c) const { return std::min(height, shape.rows - row0(c)); }
  // Rows of chunk c over the ranks (All, Rows).
  BlockDistribution slab(std::int64_t c) const { return {{rows(c), shape.cols}, nranks}; }
  // Columns over the ranks (Cols).
  BlockDistribution stripes() const { return {{shape.cols, 1}, nranks}; }
  io::Hyperslab read_slab(std::int64_t c, int rank) const {
    if (axis == Axis::Cols) {
      const BlockDistribution s = stripes();
      return {row0(c), rows(c), s.begin(rank), s.rows(rank)};
    }
    const BlockDistribution d = slab(c);
    return {row0(c) + d.begin(rank), d.rows(rank), 0, shape.cols};
  }
};

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// The tallest slabs whose buffers fit ctx's memory limit (whole 64-row blocks along columns),
// or those asked for; InputError for complex data, ResourceError when one row does not fit.
ReduceGeometry plan_geometry(const io::DatasetInfo& info, Axis axis, int nranks, std::size_t nops,
                             const PipelineContext& ctx);

// The rows (or columns) of each rank of d, as MPI counts.
std::vector<int> counts_of(const BlockDistribution& d);

} // namespace tessera::ops::detail
