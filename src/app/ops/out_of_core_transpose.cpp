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
#include "io/same_file.hpp"
#include "mpi/agreement.hpp"
#include "mpi/transpose_layout.hpp"
#include "ops/out_of_core.hpp"
#include "ops/out_of_core_io_start.hpp"
#include "ops/out_of_core_pipeline.hpp"
#include "ops/out_of_core_transpose_geometry.hpp"

namespace tessera::ops {

namespace {

using detail::BufferRing;
using detail::FaultSite;
using detail::Slot;

using Geometry = detail::TransposeGeometry;
using detail::footprint;
using detail::Footprint;
using detail::hdf5_staging;
using detail::output_layout;
using detail::plan_geometry;

void require_distinct_files(const io::DatasetRef& in, const io::DatasetRef& out) {
  TESSERA_REQUIRE(!io::same_file(in.file, out.file), InputError,
                  "the out-of-core transpose writes a new file: the output '{}' must not be the "
                  "input file '{}'",
                  out.str(), in.str());
}

// Everything both sides of one transpose share.
struct Shared {
  Shared(MPI_Comm comm, const OutOfCoreOptions& o, const io::DatasetRef& i,
         const io::DatasetRef& o_ref)
      : ctx(comm, o), in(i), out(o_ref), in_ring(ctx.depth + 1), out_ring(ctx.depth + 1) {}

  void abort(std::exception_ptr e) noexcept {
    info.abort(e);
    go.abort(e);
    in_ring.abort(e);
    out_ring.abort(e);
  }

  detail::PipelineContext ctx;
  io::DatasetRef in, out;
  io::StagingQueue<io::DatasetInfo> info{1}; // I/O thread → compute: what the input holds
  io::StagingQueue<Geometry> go{1};          // compute → I/O thread: buffers and plan are ready
  BufferRing in_ring;                        // read chunks, I/O thread → compute
  BufferRing out_ring;                       // transposed chunks, compute → I/O thread
};

void io_side(Shared& s) {
  detail::PipelineContext& ctx = s.ctx;
  io::IoThread& io = *ctx.io;
  const MPI_Comm comm = io.comm();
  const int rank = io.rank();

  detail::IoStart<Geometry> start = detail::start_io_side(ctx, s.in, s.info, s.go);
  auto& watch = start.input.watch;
  const io::H5File& fin = start.input.file;
  const Geometry& g = start.geometry;

  double t0 = wall_seconds();
  io::H5File fout = io::H5File::create(
      s.out.file, comm, ctx.options.append ? io::H5File::Mode::Append : io::H5File::Mode::Replace);
  io::create_dataset(fout, s.out.path, g.shape.transposed(), g.dtype,
                     output_layout(g, ctx.options));
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
      const io::Hyperslab h = g.read_slab(step, rank);
      t0 = wall_seconds();
      detail::with_context("reading " + what_read(),
                           [&] { io::read_block(fin, s.in.path, h, g.dtype, in.buffer->data()); });
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
      const io::Hyperslab h = g.write_slab(wc, rank);
      t0 = wall_seconds();
      detail::with_context(
          fmt::format("writing {} {} [{}, {})", s.out.str(), g.panels() ? "rows" : "columns",
                      g.start(wc), g.start(wc) + g.size(wc)),
          [&] { io::write_block(fout, s.out.path, h, g.dtype, out.buffer->data()); });
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
    io::write_attribute(fout, s.out.path, name, value);
  if (ctx.options.before_commit)
    ctx.options.before_commit(fout);
  if (ctx.options.provenance)
    io::write_provenance(fout, *ctx.options.provenance);
  fout.commit();
  ctx.io_timers.add("commit", wall_seconds() - t0);
  progress.finish();
}

void compute_side(Shared& s, OutOfCoreReport& report) {
  detail::PipelineContext& ctx = s.ctx;
  const MPI_Comm comm = ctx.compute.get();
  const int rank = ctx.compute.rank();

  io::DatasetInfo info;
  mpi::collectively(comm, [&] { info = *s.info.pop(); });
  const double t0 = wall_seconds();
  Geometry g;
  mpi::collectively(comm, [&] {
    g = plan_geometry(info, ctx.compute.size(), ctx);
    if (g.chunks == 0)
      return;
    const Footprint f = g.local ? footprint(g.local_block(0, rank), 1, 0, dtype_size(g.dtype))
                                : footprint(g.block(0), g.nranks, rank, dtype_size(g.dtype));
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
  // The block this rank's plan transposes for chunk c: with local panels its own columns, on
  // this rank alone (MPI_COMM_SELF: ranks whose blocks differ in width build plans apart).
  const auto block_of = [&](std::int64_t c) {
    return g.local ? g.local_block(c, rank) : g.block(c);
  };
  const auto make_plan = [&](Shape block) {
    plan.reset(); // one plan's exchange buffers at a time
    plan = g.local ? std::make_unique<TransposePlan>(BlockDistribution(block, 1), g.dtype,
                                                     MPI_COMM_SELF, ctx.options.backend, topt)
                   : std::make_unique<TransposePlan>(BlockDistribution(block, g.nranks), g.dtype,
                                                     comm, ctx.options.backend, topt);
    plan_block = block;
  };
  if (g.chunks > 0) {
    make_plan(block_of(0));
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
    if (block_of(c) != plan_block) {
      // The last, smaller chunk: keep the exchange algorithm the first plan settled on.
      topt.algorithm = plan->algorithm();
      make_plan(block_of(c));
    }
    const double x0 = exchange_seconds();
    const double c0 = wall_seconds();
    plan->execute(in.buffer->data(), out.buffer->data());
    detail::delay_ms(ctx.compute_delay_ms);
    const double dt = wall_seconds() - c0, dx = exchange_seconds() - x0;
    const double bytes =
        static_cast<double>((g.local ? g.local_block(c, rank).size() : g.slab(c).local_size(rank)) *
                            2) *
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

OutOfCoreReport transpose_out_of_core(const io::DatasetRef& in, const io::DatasetRef& out,
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

} // namespace tessera::ops
