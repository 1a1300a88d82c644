// The chunk geometry of the out-of-core reductions (see out_of_core_reduce_geometry.hpp).
#include "ops/out_of_core_reduce_geometry.hpp"

#include <algorithm>

#include "core/throw.hpp"

namespace tessera::ops::detail {

namespace {

// Bytes one rank needs for chunks of `h` rows: the chunk buffers plus the per-chunk doubles
// (row values and their gathered copy, or the column group partials and running folds).
std::size_t reduce_footprint(const ReduceGeometry& g, std::int64_t h, int buffers,
                             std::size_t nops) {
  const std::size_t es = dtype_size(g.dtype);
  if (g.axis == Axis::Cols) {
    const std::int64_t w = ceil_div(g.shape.cols, g.nranks);
    return buffers * static_cast<std::size_t>(h * w) * es +
           static_cast<std::size_t>(ceil_div(h, kReduceBlockRows) * w) * sizeof(double) +
           2 * nops * static_cast<std::size_t>(w) * sizeof(double);
  }
  const std::int64_t m = ceil_div(h, g.nranks);
  return buffers * static_cast<std::size_t>(m * g.shape.cols) * es +
         static_cast<std::size_t>(m + h) * sizeof(double);
}

// Input bytes per rank and chunk when neither --chunk-size nor --chunk-rows says: chunks much
// larger than the caches only cost memory that is faulted in fresh for one job and scanned a
// second time from DRAM (docs/performance.md, "Whole jobs").
constexpr std::size_t kDefaultChunkBytesPerRank = std::size_t{32} << 20;

} // namespace

ReduceGeometry plan_geometry(const io::DatasetInfo& info, Axis axis, int nranks, std::size_t nops,
                             const PipelineContext& ctx) {
  ReduceGeometry g;
  g.shape = info.shape;
  g.dtype = info.dtype;
  g.axis = axis;
  g.nranks = nranks;
  dispatch_real_dtype(g.dtype, [](auto) {}); // InputError for complex data
  if (g.shape.empty())
    return g;
  const std::int64_t M = g.shape.rows;
  // Skipping missing values copies a chunk where it has some (mpi/reduce_masked.hpp).
  const int buffers = ctx.depth + 1 + (ctx.options.missing.any() ? 1 : 0);
  // Column folds need slabs of whole blocks (or one slab of everything).
  const std::int64_t unit = axis == Axis::Cols ? kReduceBlockRows : 1;
  // Column folds prefer whole blocks: no row then takes the one-at-a-time path.
  const auto whole_blocks = [&](std::int64_t h) {
    return h >= unit && h < M ? h / unit * unit : h;
  };
  const auto fits = [&](std::int64_t h) {
    return reduce_footprint(g, h, buffers, nops) <= ctx.memory_limit;
  };
  const auto need = [&](std::int64_t h) {
    return format_bytes(static_cast<double>(reduce_footprint(g, h, buffers, nops)));
  };
  std::int64_t asked = ctx.options.chunk_rows;
  if (asked == 0 && ctx.options.chunk_bytes > 0) {
    asked = whole_blocks(lines_in(ctx.options.chunk_bytes, g.shape.cols, dtype_size(g.dtype), M));
  }
  if (asked > 0) {
    g.height = std::min(asked, M);
    if (ctx.options.memory_limit != 0 && !fits(g.height))
      TESSERA_THROW(ResourceError,
                    "chunks of {} rows of the {} {} matrix need {} per rank with staging depth "
                    "{}, more than the memory limit of {}",
                    g.height, g.shape.str(), dtype_name(g.dtype), need(g.height), ctx.depth,
                    format_bytes(static_cast<double>(ctx.memory_limit)));
  } else {
    if (!fits(1))
      TESSERA_THROW(ResourceError,
                    "the memory limit of {} per rank is too small to reduce the {} {} matrix "
                    "along {}: chunks of one row already need {} with staging depth {}",
                    format_bytes(static_cast<double>(ctx.memory_limit)), g.shape.str(),
                    dtype_name(g.dtype), axis_name(axis), need(1), ctx.depth);
    const std::int64_t sized =
        lines_in(kDefaultChunkBytesPerRank * static_cast<std::size_t>(nranks), g.shape.cols,
                 dtype_size(g.dtype), M);
    g.height = whole_blocks(std::min(largest_fitting(M, fits), std::max(sized, unit)));
  }
  g.chunks = ceil_div(M, g.height);
  return g;
}

std::vector<int> counts_of(const BlockDistribution& d) {
  std::vector<int> c(static_cast<std::size_t>(d.nranks()));
  for (int r = 0; r < d.nranks(); ++r)
    c[r] = static_cast<int>(d.rows(r));
  return c;
}

} // namespace tessera::ops::detail
