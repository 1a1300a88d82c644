// The chunk geometry of the out-of-core transpose (see out_of_core_transpose_geometry.hpp).
#include "ops/out_of_core_transpose_geometry.hpp"

#include <algorithm>

#include "core/throw.hpp"
#include "mpi/transpose_layout.hpp"

namespace tessera::ops::detail {

namespace {

std::size_t worst_total(Shape block, int nranks, int buffers, std::size_t es, bool local) {
  if (local) // rank 0 holds the most columns, and there is no exchange
    return footprint(Shape{block.rows, (block.cols + nranks - 1) / nranks}, 1, 0, es)
        .total(buffers);
  std::size_t worst = 0;
  // Rank 0 holds the most rows and columns; the last rank the largest exchange buffers.
  for (int r : {0, nranks - 1})
    worst = std::max(worst, footprint(block, nranks, r, es).total(buffers));
  return worst;
}

// HDF5 compresses (and decompresses) whole chunks: while it writes part of a compressed dataset
// it holds, for each HDF5 chunk the part touches, the uncompressed chunk and its compressed
// copy — with parallel HDF5 on the rank that owns the chunk, which collects the other ranks'
// pieces first. One rank may own every chunk its own part of a write touches, so that is the
// bound counted here: a rank writes a `rows` x `cols` rectangle, at any offset, of an output of
// `out` shape stored in HDF5 chunks of `chunk` shape.
std::size_t filtered_staging(std::int64_t rows, std::int64_t cols, Shape out, Shape chunk,
                             std::size_t es) {
  if (chunk.empty() || rows == 0 || cols == 0)
    return 0;
  // A run of n lines at an unknown offset meets at most ceil((n - 1) / c) + 1 chunks of c.
  const auto met = [](std::int64_t n, std::int64_t c, std::int64_t total) {
    return std::min((total + c - 1) / c, (n + c - 2) / c + 1);
  };
  const std::int64_t chunks = met(rows, chunk.rows, out.rows) * met(cols, chunk.cols, out.cols);
  return 2 * static_cast<std::size_t>(chunks) * static_cast<std::size_t>(chunk.size()) * es;
}

} // namespace

Footprint footprint(Shape block, int nranks, int rank, std::size_t es) {
  const TransposeLayout layout(BlockDistribution(block, nranks), rank);
  Footprint f;
  f.in = static_cast<std::size_t>(layout.my_rows() * block.cols) * es;
  f.out = static_cast<std::size_t>(layout.my_cols() * block.rows) * es;
  if (nranks > 1)
    f.exchange = static_cast<std::size_t>(layout.send_elements() + layout.recv_elements()) * es;
  return f;
}

// What HDF5 holds per rank for compressed output written in chunks of extent e (0 uncompressed),
// for the chunk shape output_layout() chooses with that extent.
std::size_t hdf5_staging(const TransposeGeometry& g, std::int64_t e, const OutOfCoreOptions& o) {
  if (o.write.deflate <= 0 || g.shape.empty())
    return 0;
  TransposeGeometry trial = g;
  trial.extent = e;
  trial.chunks = 1;
  const Shape out = g.shape.transposed();
  const Shape chunk = io::chunk_dims(out, g.dtype, output_layout(trial, o));
  // Rank 0 writes the most rows: its rows of the chunk's transpose, d.global().cols wide.
  const BlockDistribution d = BlockDistribution(g.block_of(e), g.nranks).transposed();
  return filtered_staging(d.rows(0), d.global().cols, out, chunk, dtype_size(g.dtype));
}

TransposeGeometry plan_geometry(const io::DatasetInfo& info, int nranks,
                                const PipelineContext& ctx) {
  TransposeGeometry g;
  g.shape = info.shape;
  g.dtype = info.dtype;
  g.nranks = nranks;
  g.kind = ctx.options.chunk_shape;
  // An exchange the user chose keeps the distributed form (to measure it).
  g.local = g.panels() && nranks > 1 && ctx.options.exchange == Exchange::Auto;
  if (g.shape.empty())
    return g; // nothing to stream: the output is created empty
  const std::size_t es = dtype_size(g.dtype);
  const int buffers = ctx.depth + 1;
  const std::int64_t whole = g.panels() ? g.shape.cols : g.shape.rows;
  const auto need = [&](std::int64_t e) {
    return worst_total(g.block_of(e), nranks, buffers, es, g.local) +
           hdf5_staging(g, e, ctx.options);
  };
  const auto fits = [&](std::int64_t e) { return need(e) <= ctx.memory_limit; };
  // Names HDF5's share of need(e) when it has one.
  const auto of_which = [&](std::int64_t e) {
    const std::size_t h = hdf5_staging(g, e, ctx.options);
    return h == 0 ? std::string()
                  : fmt::format(" ({} of it whole compressed chunks held by HDF5; smaller "
                                "--chunk-rows/--chunk-cols make them smaller)",
                                format_bytes(static_cast<double>(h)));
  };
  std::int64_t asked = g.panels() ? ctx.options.chunk_cols : ctx.options.chunk_rows;
  if (asked == 0 && ctx.options.chunk_bytes > 0)
    asked = lines_in(ctx.options.chunk_bytes, g.block_of(1).size(), es, whole);
  if (asked > 0) {
    g.extent = std::min(asked, whole);
    // An explicit chunk size is checked against an explicit limit only.
    if (ctx.options.memory_limit != 0 && !fits(g.extent))
      TESSERA_THROW(ResourceError,
                    "chunks of {} {} of the {} {} matrix need {} per rank with staging depth "
                    "{}, more than the memory limit of {}{}",
                    g.extent, chunk_shape_name(g.kind), g.shape.str(), dtype_name(g.dtype),
                    format_bytes(static_cast<double>(need(g.extent))), ctx.depth,
                    format_bytes(static_cast<double>(ctx.memory_limit)), of_which(g.extent));
  } else {
    if (!fits(1))
      TESSERA_THROW(ResourceError,
                    "the memory limit of {} per rank is too small to transpose the {} {} "
                    "matrix: chunks of one {} already need {} with staging depth {}{}",
                    format_bytes(static_cast<double>(ctx.memory_limit)), g.shape.str(),
                    dtype_name(g.dtype), g.panels() ? "column" : "row",
                    format_bytes(static_cast<double>(need(1))), ctx.depth, of_which(1));
    g.extent = largest_fitting(whole, fits);
  }
  g.chunks = (whole + g.extent - 1) / g.extent;
  return g;
}

// The output's HDF5 layout. A chunked layout whose HDF5 chunks tile the part of the output one
// staging chunk writes has every HDF5 chunk written whole, exactly once: none is read back,
// decompressed and rewritten when the next staging chunk arrives. So unless the HDF5 chunk's
// shape is given, chunked (or compressed) output gets HDF5 chunks H columns wide (row slabs) or
// W rows tall (column panels), about 1 MiB when the other side is not given either.
io::WriteOptions output_layout(const TransposeGeometry& g, const OutOfCoreOptions& o) {
  io::WriteOptions w = o.write;
  if (!(w.chunk_rows > 0 || w.chunk_cols > 0 || w.deflate > 0) || g.chunks == 0)
    return w;
  // The other side of an HDF5 chunk g.extent long: about 1 MiB, within `most`.
  const auto about_1mib = [&](std::int64_t most) {
    const auto bytes = g.extent * static_cast<std::int64_t>(dtype_size(g.dtype));
    return std::clamp<std::int64_t>((std::int64_t{1} << 20) / bytes, 1, most);
  };
  const Shape out = g.shape.transposed();
  if (!g.panels() && w.chunk_cols == 0) {
    w.chunk_cols = g.extent;
    if (w.chunk_rows == 0)
      w.chunk_rows = about_1mib(out.rows);
  } else if (g.panels() && w.chunk_rows == 0) {
    w.chunk_rows = g.extent;
    if (w.chunk_cols == 0)
      w.chunk_cols = about_1mib(out.cols);
  }
  return w;
}

} // namespace tessera::ops::detail
