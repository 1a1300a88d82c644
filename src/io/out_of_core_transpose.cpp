// Out-of-core transpose: chunks of the input are read, transposed across the ranks by a
// TransposePlan, and written to the output. A chunk is either
//   a column panel (default): input columns [c·W, c·W + w_c) of all M rows. The ranks read their
//     rows of it (M runs of w_c elements together) and write its transpose, output rows
//     [c·W, c·W + w_c) — one contiguous stretch of the output;
//   a row slab: input rows [c·H, c·H + h_c), one contiguous stretch of the input; its transpose
//     is the output's column block c, N runs of h_c elements.
// Either way the chunk's block B (M × w_c or h_c × N) is spread over the ranks as
// BlockDistribution(B, P), and the plan turns it into BlockDistribution(Bᵀ, P): each rank reads
// and writes one hyperslab per chunk. W (or H) is the largest extent whose buffers fit the
// memory limit, because the strided side's runs grow with it (docs/performance.md "Out-of-core
// I/O" has the measurements behind both choices).
//
// The I/O thread works through steps s = 0, 1, …: read chunk s, then write chunk s − depth.
// Compute transposes chunk c as soon as it has been read and an output buffer is free. With
// depth + 1 buffers per direction, reading chunk s + 1 and writing chunk s − 1 overlap the
// transpose of chunk s.
#include <algorithm>
#include <optional>

#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_file.hpp"
#include "io/input_watch.hpp"
#include "io/out_of_core.hpp"
#include "io/out_of_core_pipeline.hpp"
#include "io/same_file.hpp"
#include "mpi/agreement.hpp"
#include "mpi/transpose_layout.hpp"

namespace tessera::io {

namespace {

using detail::BufferRing;
using detail::FaultSite;
using detail::Slot;

struct Geometry {
  Shape shape; // input M × N
  DType dtype = DType::f64;
  int nranks = 1;
  ChunkShape kind = ChunkShape::RowSlabs;
  std::int64_t extent = 0; // H input rows (row slabs) or W input columns (column panels) per chunk
  std::int64_t chunks = 0;

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
  // Rank r reads its rows of the block and, after the plan, writes its rows of the block's
  // transpose: output rows col0 + [b', e') × output columns [row0, row0 + block rows).
  Hyperslab read_slab(std::int64_t c, int rank) const {
    const BlockDistribution d = slab(c);
    return {row0(c) + d.begin(rank), d.rows(rank), col0(c), d.global().cols};
  }
  Hyperslab write_slab(std::int64_t c, int rank) const {
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

Footprint footprint(Shape block, int nranks, int rank, std::size_t es) {
  const TransposeLayout layout(BlockDistribution(block, nranks), rank);
  Footprint f;
  f.in = static_cast<std::size_t>(layout.my_rows() * block.cols) * es;
  f.out = static_cast<std::size_t>(layout.my_cols() * block.rows) * es;
  if (nranks > 1)
    f.exchange = static_cast<std::size_t>(layout.send_elements() + layout.recv_elements()) * es;
  return f;
}

std::size_t worst_total(Shape block, int nranks, int buffers, std::size_t es) {
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

WriteOptions output_layout(const Geometry& g, const OutOfCoreOptions& o);

// What HDF5 holds per rank for compressed output written in chunks of extent e (0 uncompressed),
// for the chunk shape output_layout() chooses with that extent.
std::size_t hdf5_staging(const Geometry& g, std::int64_t e, const OutOfCoreOptions& o) {
  if (o.write.deflate <= 0 || g.shape.empty())
    return 0;
  Geometry trial = g;
  trial.extent = e;
  trial.chunks = 1;
  const Shape out = g.shape.transposed();
  const Shape chunk = chunk_dims(out, g.dtype, output_layout(trial, o));
  // Rank 0 writes the most rows: its rows of the chunk's transpose, d.global().cols wide.
  const BlockDistribution d = BlockDistribution(g.block_of(e), g.nranks).transposed();
  return filtered_staging(d.rows(0), d.global().cols, out, chunk, dtype_size(g.dtype));
}

Geometry plan_geometry(const DatasetInfo& info, int nranks, const detail::PipelineContext& ctx) {
  Geometry g;
  g.shape = info.shape;
  g.dtype = info.dtype;
  g.nranks = nranks;
  g.kind = ctx.options.chunk_shape;
  if (g.shape.empty())
    return g; // nothing to stream: the output is created empty
  const std::size_t es = dtype_size(g.dtype);
  const int buffers = ctx.depth + 1;
  const std::int64_t whole = g.panels() ? g.shape.cols : g.shape.rows;
  const auto need = [&](std::int64_t e) {
    return worst_total(g.block_of(e), nranks, buffers, es) + hdf5_staging(g, e, ctx.options);
  };
  const auto fits = [&](std::int64_t e) { return need(e) <= ctx.memory_limit; };
  // Names HDF5's share of need(e) when it has one.
  const auto of_which = [&](std::int64_t e) {
    const std::size_t h = hdf5_staging(g, e, ctx.options);
    return h == 0 ? std::string()
                  : fmt::format(" ({} of it whole compressed chunks held by HDF5; smaller "
                                "--chunk-rows/--chunk-cols make them smaller)",
                                detail::format_bytes(static_cast<double>(h)));
  };
  std::int64_t asked = g.panels() ? ctx.options.chunk_cols : ctx.options.chunk_rows;
  if (asked == 0 && ctx.options.chunk_bytes > 0)
    asked = detail::lines_in(ctx.options.chunk_bytes, g.block_of(1).size(), es, whole);
  if (asked > 0) {
    g.extent = std::min(asked, whole);
    // An explicit chunk size is checked against an explicit limit only.
    if (ctx.options.memory_limit != 0 && !fits(g.extent))
      TESSERA_THROW(ResourceError,
                    "chunks of {} {} of the {} {} matrix need {} per rank with staging depth "
                    "{}, more than the memory limit of {}{}",
                    g.extent, chunk_shape_name(g.kind), g.shape.str(), dtype_name(g.dtype),
                    detail::format_bytes(static_cast<double>(need(g.extent))), ctx.depth,
                    detail::format_bytes(static_cast<double>(ctx.memory_limit)),
                    of_which(g.extent));
  } else {
    if (!fits(1))
      TESSERA_THROW(ResourceError,
                    "the memory limit of {} per rank is too small to transpose the {} {} "
                    "matrix: chunks of one {} already need {} with staging depth {}{}",
                    detail::format_bytes(static_cast<double>(ctx.memory_limit)), g.shape.str(),
                    dtype_name(g.dtype), g.panels() ? "column" : "row",
                    detail::format_bytes(static_cast<double>(need(1))), ctx.depth, of_which(1));
    g.extent = detail::largest_fitting(whole, fits);
  }
  g.chunks = (whole + g.extent - 1) / g.extent;
  return g;
}

void require_distinct_files(const DatasetRef& in, const DatasetRef& out) {
  TESSERA_REQUIRE(!same_file(in.file, out.file), InputError,
                  "the out-of-core transpose writes a new file: the output '{}' must not be the "
                  "input file '{}'",
                  out.str(), in.str());
}

// The output's HDF5 layout. A chunked layout whose HDF5 chunks tile the part of the output one
// staging chunk writes has every HDF5 chunk written whole, exactly once: none is read back,
// decompressed and rewritten when the next staging chunk arrives. So unless the HDF5 chunk's
// shape is given, chunked (or compressed) output gets HDF5 chunks H columns wide (row slabs) or
// W rows tall (column panels), about 1 MiB when the other side is not given either.
WriteOptions output_layout(const Geometry& g, const OutOfCoreOptions& o) {
  WriteOptions w = o.write;
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

// Everything both sides of one transpose share.
struct Shared {
  Shared(MPI_Comm comm, const OutOfCoreOptions& o, const DatasetRef& i, const DatasetRef& o_ref)
      : ctx(comm, o), in(i), out(o_ref), in_ring(ctx.depth + 1), out_ring(ctx.depth + 1) {}

  void abort(std::exception_ptr e) noexcept {
    info.abort(e);
    go.abort(e);
    in_ring.abort(e);
    out_ring.abort(e);
  }

  detail::PipelineContext ctx;
  DatasetRef in, out;
  StagingQueue<DatasetInfo> info{1}; // I/O thread → compute: what the input holds
  StagingQueue<Geometry> go{1};      // compute → I/O thread: buffers and plan are ready
  BufferRing in_ring;                // read chunks, I/O thread → compute
  BufferRing out_ring;               // transposed chunks, compute → I/O thread
};

void io_side(Shared& s) {
  detail::PipelineContext& ctx = s.ctx;
  IoThread& io = *ctx.io;
  const MPI_Comm comm = io.comm();
  const int rank = io.rank();

  double t0 = wall_seconds();
  // Before the open: whatever changes the file after this is seen by a check between chunks.
  std::optional<detail::InputWatch> watch;
  mpi::collectively(comm, [&] { watch.emplace(s.in.file); });
  H5File fin = H5File::open_read(s.in.file, comm);
  const DatasetInfo info = inspect_dataset(fin, s.in.path);
  ctx.io_timers.add("open", wall_seconds() - t0);
  mpi::collectively(comm, [&] { s.info.push(info); });
  Geometry g;
  mpi::collectively(comm, [&] { g = *s.go.pop(); });

  t0 = wall_seconds();
  H5File fout = H5File::create(s.out.file, comm);
  create_dataset(fout, s.out.path, g.shape.transposed(), g.dtype, output_layout(g, ctx.options));
  ctx.io_timers.add("create", wall_seconds() - t0);

  const std::size_t es = dtype_size(g.dtype);
  const double total = static_cast<double>(g.shape.size()) * static_cast<double>(es);
  detail::ProgressMeter progress("transpose", total, ctx.options.progress && rank == 0,
                                 ctx.options.progress_interval);
  const std::int64_t K = g.chunks, L = ctx.depth;
  std::optional<Slot> written; // to hand back to compute
  const auto hand_back = [&] {
    if (written)
      s.out_ring.free.push(*written);
    written.reset();
  };
  for (std::int64_t step = 0; step < K + L; ++step) {
    const bool read = step < K;
    const std::int64_t wc = step - L; // the chunk written in this step
    const bool write = wc >= 0;
    const auto what_read = [&] {
      return fmt::format("{} {} [{}, {})", s.in.str(), chunk_shape_name(g.kind), g.start(step),
                         g.start(step) + g.size(step));
    };
    Slot in;
    if (read) {
      mpi::collectively(comm, [&] {
        hand_back();
        in = detail::pop_chunk(s.in_ring.free, -1, "free read-buffer");
        detail::inject_fault(ctx.fault, FaultSite::Read, rank, step);
      });
      const Hyperslab h = g.read_slab(step, rank);
      t0 = wall_seconds();
      detail::with_context("reading " + what_read(),
                           [&] { read_block(fin, s.in.path, h, g.dtype, in.buffer->data()); });
      detail::delay_ms(ctx.io_delay_ms);
      ctx.io_timers.add("read", wall_seconds() - t0, static_cast<double>(h.size() * es));
      in.chunk = step;
    }
    Slot out;
    mpi::collectively(comm, [&] {
      if (read) {
        if (ctx.options.after_read)
          ctx.options.after_read(step);
        // A chunk read from a file that changed meanwhile never reaches compute.
        watch->check("after reading " + what_read());
        s.in_ring.full.push(in);
      }
      hand_back();
      if (write) {
        out = detail::pop_chunk(s.out_ring.full, wc, "transposed-chunk");
        detail::inject_fault(ctx.fault, FaultSite::Write, rank, wc);
      }
    });
    if (write) {
      const Hyperslab h = g.write_slab(wc, rank);
      t0 = wall_seconds();
      detail::with_context(fmt::format("writing {} {} [{}, {})", s.out.str(),
                                       g.panels() ? "rows" : "columns", g.start(wc),
                                       g.start(wc) + g.size(wc)),
                           [&] { write_block(fout, s.out.path, h, g.dtype, out.buffer->data()); });
      ctx.io_timers.add("write", wall_seconds() - t0, static_cast<double>(h.size() * es));
      progress.add(static_cast<double>(g.block(wc).size()) * static_cast<double>(es));
      written = out;
    }
  }
  mpi::collectively(comm, [&] {
    hand_back();
    s.in_ring.full.close();
  });

  t0 = wall_seconds();
  for (const auto& [name, value] : ctx.options.dataset_attributes)
    write_attribute(fout, s.out.path, name, value);
  if (ctx.options.before_commit)
    ctx.options.before_commit(fout);
  if (ctx.options.provenance)
    write_provenance(fout, *ctx.options.provenance);
  fout.commit();
  ctx.io_timers.add("commit", wall_seconds() - t0);
  progress.finish();
}

void compute_side(Shared& s, OutOfCoreReport& report) {
  detail::PipelineContext& ctx = s.ctx;
  const MPI_Comm comm = ctx.compute.get();
  const int rank = ctx.compute.rank();

  DatasetInfo info;
  mpi::collectively(comm, [&] { info = *s.info.pop(); });
  const double t0 = wall_seconds();
  Geometry g;
  mpi::collectively(comm, [&] {
    g = plan_geometry(info, ctx.compute.size(), ctx);
    if (g.chunks == 0)
      return;
    const Footprint f = footprint(g.block(0), g.nranks, rank, dtype_size(g.dtype));
    s.in_ring.allocate(f.in);
    s.out_ring.allocate(f.out);
    report.buffer_bytes = s.in_ring.allocated_bytes() + s.out_ring.allocated_bytes() + f.exchange;
    report.hdf5_staging_bytes = hdf5_staging(g, g.extent, ctx.options);
  });
  report.chunks = g.chunks;
  report.chunk_shape = g.kind;
  report.chunk_rows = g.chunks > 0 ? g.block(0).rows : 0;
  report.chunk_cols = g.chunks > 0 ? g.block(0).cols : 0;
  if (rank == 0 && g.chunks > 0)
    log::info("transpose out of core: {} {} in {}, {} of buffers per rank{}", g.shape.str(),
              dtype_name(g.dtype), report.chunks_str(),
              detail::format_bytes(static_cast<double>(report.buffer_bytes)),
              report.hdf5_staging_bytes == 0
                  ? std::string()
                  : " + at most " +
                        detail::format_bytes(static_cast<double>(report.hdf5_staging_bytes)) +
                        " held by HDF5 for compressed chunks");

  PhaseTimers plan_timers;
  TransposeOptions topt{.algorithm = ctx.options.exchange, .timers = &plan_timers};
  std::unique_ptr<TransposePlan> plan;
  Shape plan_block{-1, -1};
  const auto make_plan = [&](Shape block) {
    plan.reset(); // one plan's exchange buffers at a time
    plan = std::make_unique<TransposePlan>(BlockDistribution(block, g.nranks), g.dtype, comm,
                                           ctx.options.backend, topt);
    plan_block = block;
  };
  if (g.chunks > 0) {
    make_plan(g.block(0));
    report.backend = plan->backend();
  }
  ctx.compute_timers.add("plan", wall_seconds() - t0);
  mpi::collectively(comm, [&] { s.go.push(g); });

  const auto exchange_seconds = [&] {
    const auto it = plan_timers.phases().find("transpose.exchange");
    return it == plan_timers.phases().end() ? 0.0 : it->second.seconds;
  };
  std::optional<Slot> done_in, done_out;
  const auto hand_over = [&] {
    if (done_in)
      s.in_ring.free.push(*done_in);
    if (done_out)
      s.out_ring.full.push(*done_out);
    done_in.reset();
    done_out.reset();
  };
  for (std::int64_t c = 0; c < g.chunks; ++c) {
    Slot in, out;
    mpi::collectively(comm, [&] {
      hand_over();
      in = detail::pop_chunk(s.in_ring.full, c, "read-ahead");
      out = detail::pop_chunk(s.out_ring.free, -1, "free write-buffer");
      detail::inject_fault(ctx.fault, FaultSite::Compute, rank, c);
    });
    if (g.block(c) != plan_block) {
      // The last, smaller chunk: keep the exchange algorithm the first plan settled on.
      topt.algorithm = plan->algorithm();
      make_plan(g.block(c));
    }
    const double x0 = exchange_seconds();
    const double c0 = wall_seconds();
    plan->execute(in.buffer->data(), out.buffer->data());
    detail::delay_ms(ctx.compute_delay_ms);
    const double dt = wall_seconds() - c0, dx = exchange_seconds() - x0;
    const double bytes = static_cast<double>(g.slab(c).local_size(rank) * 2) *
                         static_cast<double>(dtype_size(g.dtype));
    ctx.compute_timers.add("compute", dt - dx, bytes);
    ctx.compute_timers.add("exchange", dx);
    out.chunk = c;
    done_in = in;
    done_out = out;
  }
  mpi::collectively(comm, hand_over);
}

} // namespace

OutOfCoreReport transpose_out_of_core(const DatasetRef& in, const DatasetRef& out,
                                      const OutOfCoreOptions& options, MPI_Comm comm) {
  mpi::collectively(comm, [&] { require_distinct_files(in, out); });
  Shared s(comm, options, in, out);
  OutOfCoreReport report;
  detail::run_sides(
      *s.ctx.io, [&] { io_side(s); }, [&] { compute_side(s, report); },
      [&](std::exception_ptr e) { s.abort(e); });
  detail::finish_report(s.ctx, report, s.in_ring, &s.out_ring);
  return report;
}

} // namespace tessera::io
