// Out-of-core reductions: the dataset streams through in slabs of rows, read ahead by the I/O
// thread, and every value follows the canonical order of core/reduction.hpp exactly, whatever
// the chunking and the rank count.
//
// Axis::All and Axis::Rows: a slab's rows are spread over the ranks (contiguous reads); each
// rank computes the row values r(i) of its rows (cpu::reduce_rows), and the slab's row values
// are gathered on every rank (one double per row: small next to the rows). Every rank then
// folds them in global row order — p[b] over each 64-row block, the blocks into the total —
// carrying an unfinished block over to the next slab, so slabs need not align with blocks.
//
// Axis::Cols: a column's fold must see its rows in order, so here the ranks split the columns
// instead: each reads its column stripe of the slab (the ranks' stripes together are again one
// contiguous stretch of the file) and keeps, per column, the running fold over whole 64-row
// blocks (cpu::reduce_col_groups) and the sequential fold of the block in progress. Slabs are
// a multiple of 64 rows when the memory limit allows it, so blocks rarely straddle two slabs;
// when one does, its rows are continued one at a time, which keeps the order exact. The
// finished columns are gathered at the end.
//
// The per-chunk kernels come from a ReduceEngine of the options' backend: with the CUDA backend
// each chunk goes from its host buffer through the GPU's streams and only the row values or
// column partials come back, in the same canonical order as the CPU kernels.
//
// f64 norms that overflowed or underflowed get the Norm2 rescue of core/reduction.hpp: a pass
// for NormInf along the axis (unless it was asked for too), then a pass of the rescue engine
// (mpi/norm2_rescue.hpp) over the same chunks (src/app/ops/out_of_core_norm2.cpp).
//
// Missing values (OutOfCoreOptions::missing) and Count go through the masking engine
// (mpi/reduce_masked.hpp) around the backend's, chunk by chunk; Mean, Min and Max then fold a
// Count beside them and are finished with it at the end.
#include <mpi.h>

#include <algorithm>
#include <optional>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "cpu/reduce.hpp"
#include "io/h5_file.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"
#include "mpi/collectives.hpp"
#include "mpi/norm2_rescue.hpp"
#include "mpi/reduce_engine.hpp"
#include "mpi/reduce_masked.hpp"
#include "ops/out_of_core.hpp"
#include "ops/out_of_core_io_start.hpp"
#include "ops/out_of_core_pipeline.hpp"
#include "ops/out_of_core_reduce_geometry.hpp"
#include "ops/out_of_core_reduce_pass.hpp"

namespace tessera::ops {

namespace {

using detail::BufferRing;
using detail::FaultSite;
using detail::Slot;

using Geometry = detail::ReduceGeometry;
using detail::ceil_div;
using detail::counts_of;
using detail::plan_geometry;

// Running state of each op, kept identically on every rank (All, Rows) or per stripe (Cols).
struct Accumulator {
  Op op;
  double block = 0.0;         // All: the fold of the current 64-row block so far
  double total = 0.0;         // All: the fold of the finished super-blocks
  double super = 0.0;         // All: the fold of the finished blocks of the open super-block
  std::vector<double> values; // Rows: finished row values; Cols: the finished super-blocks
  std::vector<double> supers; // Cols: per column, the open super-block's finished blocks
  std::vector<double> open;   // Cols: per column, the fold of the block in progress
};

struct Shared {
  Shared(MPI_Comm comm, const OutOfCoreOptions& o, const io::DatasetRef& i, const Norm2Exponents* r,
         bool extra_pass)
      : ctx(comm, o), in(i), rescue(r), extra(extra_pass), ring(ctx.depth + 1) {}
  void abort(std::exception_ptr e) noexcept {
    info.abort(e);
    go.abort(e);
    ring.abort(e);
  }
  detail::PipelineContext ctx;
  io::DatasetRef in;
  const Norm2Exponents* rescue; // the Norm2 rescue's pass: its exponents; else null
  bool extra;                   // a pass of the rescue (its geometry is not logged again)
  io::StagingQueue<io::DatasetInfo> info{1};
  io::StagingQueue<Geometry> go{1};
  BufferRing ring;
};

void io_side(Shared& s) {
  detail::PipelineContext& ctx = s.ctx;
  const MPI_Comm comm = ctx.io->comm();
  const int rank = ctx.io->rank();
  detail::IoStart<Geometry> start = detail::start_io_side(ctx, s.in, s.info, s.go, true);
  auto& watch = start.input.watch;
  const io::H5File& fin = start.input.file;
  const Geometry& g = start.geometry;

  const std::size_t es = dtype_size(g.dtype);
  const auto what_read = [&](std::int64_t c) {
    return fmt::format("{} rows [{}, {})", s.in.str(), g.row0(c), g.row0(c) + g.rows(c));
  };
  std::optional<Slot> filled;
  // Hands the chunk just read to compute, unless the file changed meanwhile. Local.
  const auto hand_over = [&] {
    if (!filled)
      return;
    if (ctx.options.after_read)
      ctx.options.after_read(filled->chunk);
    watch->check("after reading " + what_read(filled->chunk));
    s.ring.full.push(*filled);
    filled.reset();
  };
  for (std::int64_t c = 0; c < g.chunks; ++c) {
    Slot slot;
    mpi::collectively(comm, [&] {
      hand_over();
      slot = detail::pop_chunk(s.ring.free, -1, "free read-buffer");
      detail::inject_fault(ctx.fault, FaultSite::Read, rank, c);
    });
    const io::Hyperslab h = g.read_slab(c, rank);
    const double t0 = wall_seconds();
    detail::with_context("reading " + what_read(c),
                         [&] { io::read_block(fin, s.in.path, h, g.dtype, slot.buffer->data()); });
    detail::delay_ms(ctx.io_delay_ms);
    ctx.io_timers.add("read", wall_seconds() - t0, static_cast<double>(h.size() * es));
    slot.chunk = c;
    filled = slot;
  }
  mpi::collectively(comm, [&] {
    hand_over();
    s.ring.full.close();
  });
}

// Folds one chunk into the accumulators. `scaled`: the engine, when it is the rescue's.
template <class T>
void reduce_chunk(const Geometry& g, std::int64_t c, int rank, const T* data, ReduceEngine& engine,
                  ScaledNorm2Engine* scaled, std::vector<Accumulator>& acc, MPI_Comm comm,
                  PhaseTimers& timers) {
  if (g.axis == Axis::Cols) {
    const double t0 = wall_seconds();
    const std::int64_t h = g.rows(c), w = g.stripes().rows(rank), row0 = g.row0(c);
    const std::int64_t end = row0 + h;
    // Rows [row0, head_end) finish the block the previous slab left open; whole blocks follow;
    // the rows after them open the next block.
    const std::int64_t head_end =
        std::min(end, ceil_div(row0, kReduceBlockRows) * kReduceBlockRows);
    const std::int64_t body_end = head_end + (end - head_end) / kReduceBlockRows * kReduceBlockRows;
    const std::int64_t blocks = (body_end - head_end) / kReduceBlockRows;
    std::vector<double> parts(static_cast<std::size_t>(std::max<std::int64_t>(blocks, 1) * w));
    // The whole blocks' column partials of every op from one pass over them (the same bits as
    // op by op); the rows before and after them are fewer than a block.
    std::vector<std::vector<double>> body(acc.size());
    if (blocks > 0) {
      std::vector<Op> ops;
      std::vector<double*> outs;
      for (std::size_t k = 0; k < acc.size(); ++k) {
        body[k].resize(static_cast<std::size_t>(blocks * w));
        ops.push_back(acc[k].op);
        outs.push_back(body[k].data());
      }
      engine.reduce_col_groups_multi(ops, data + (head_end - row0) * w, body_end - head_end, w,
                                     outs.data());
    }
    for (std::size_t k = 0; k < acc.size(); ++k) {
      Accumulator& a = acc[k];
      // Folds the open block, which ends at row `last` (exclusive), into the running folds.
      const auto close_block = [&](std::int64_t last) {
        cpu::fold_partials(a.op, a.values.data(), a.supers.data(), (last - 1) / kReduceBlockRows,
                           a.open.data(), 1, w);
        std::fill(a.open.begin(), a.open.end(), identity(a.op));
      };
      // One row at a time: f of each element, combined into the open fold in row order.
      for (std::int64_t i = row0; i < head_end; ++i) {
        engine.reduce_col_groups(a.op, data + (i - row0) * w, 1, w, parts.data());
        for (std::int64_t j = 0; j < w; ++j)
          a.open[j] = combine(a.op, a.open[j], parts[j]);
      }
      if (head_end > row0 && (head_end % kReduceBlockRows == 0 || head_end == g.shape.rows))
        close_block(head_end);
      if (blocks > 0)
        cpu::fold_partials(a.op, a.values.data(), a.supers.data(), head_end / kReduceBlockRows,
                           body[k].data(), blocks, w);
      if (end > body_end) {
        // The block is open (identity): its fold from the start is a group of its own.
        engine.reduce_col_groups(a.op, data + (body_end - row0) * w, end - body_end, w,
                                 a.open.data());
        if (end == g.shape.rows)
          close_block(end);
      }
    }
    timers.add("compute", wall_seconds() - t0);
    return;
  }
  const BlockDistribution d = g.slab(c);
  const std::vector<int> counts = counts_of(d);
  // Every op's row values from one pass over the chunk (the engines' multi-op contract: the
  // same bits as op by op), then each op's exchange and fold.
  std::vector<std::vector<double>> mine(
      acc.size(), std::vector<double>(static_cast<std::size_t>(d.rows(rank))));
  {
    const double t0 = wall_seconds();
    if (scaled) // per-row exponents are indexed by global row
      scaled->set_first_row(g.row0(c) + d.begin(rank));
    std::vector<Op> ops;
    std::vector<double*> outs;
    for (std::size_t k = 0; k < acc.size(); ++k) {
      ops.push_back(acc[k].op);
      outs.push_back(mine[k].data());
    }
    engine.reduce_rows_multi(ops, data, d.rows(rank), g.shape.cols, outs.data());
    timers.add("compute", wall_seconds() - t0);
  }
  std::vector<double> all;
  for (std::size_t k = 0; k < acc.size(); ++k) {
    Accumulator& a = acc[k];
    double t0 = wall_seconds();
    all = mpi::allgatherv(comm, mine[k], counts);
    timers.add("exchange", wall_seconds() - t0, static_cast<double>(all.size() * sizeof(double)));
    t0 = wall_seconds();
    if (g.axis == Axis::Rows) {
      a.values.insert(a.values.end(), all.begin(), all.end()); // finished at the end
    } else {
      std::int64_t row = g.row0(c);
      for (double r : all) {
        a.block = combine(a.op, a.block, r);
        if (++row % kReduceBlockRows == 0 || row == g.shape.rows) {
          cpu::fold_partials(a.op, &a.total, &a.super, (row - 1) / kReduceBlockRows, &a.block, 1,
                             1);
          a.block = identity(a.op);
        }
      }
    }
    timers.add("compute", wall_seconds() - t0);
  }
}

ReduceResult compute_side(Shared& s, const std::vector<Op>& ops, Axis axis, OutOfCoreReport& report,
                          DType& dtype) {
  detail::PipelineContext& ctx = s.ctx;
  const MPI_Comm comm = ctx.compute.get();
  const int rank = ctx.compute.rank();

  const MissingValues& missing = ctx.options.missing;
  const std::vector<Op> all_ops = with_counts(ops, missing);
  io::DatasetInfo info;
  mpi::collectively(comm, [&] { info = *s.info.pop(); });
  Geometry g;
  mpi::collectively(comm, [&] {
    TESSERA_REQUIRE(!ops.empty(), InputError, "no reduction asked for");
    g = plan_geometry(info, axis, ctx.compute.size(), all_ops.size(), ctx);
    if (g.chunks == 0)
      return;
    const std::size_t es = dtype_size(g.dtype);
    const io::Hyperslab first = g.read_slab(0, rank);
    // Every chunk fits the first one's buffer: it is the largest on this rank.
    s.ring.allocate(static_cast<std::size_t>(first.size()) * es);
    report.buffer_bytes = s.ring.allocated_bytes();
  });
  report.chunks = g.chunks;
  report.chunk_rows = g.height;
  dtype = g.dtype;
  if (rank == 0 && g.chunks > 0 && !s.extra)
    log::info("reduce out of core: {} {} along {} in {} chunks of {} rows, {} of buffers per rank",
              g.shape.str(), dtype_name(g.dtype), axis_name(axis), g.chunks, g.height,
              detail::format_bytes(static_cast<double>(report.buffer_bytes)));
  // Collective, and every rank must agree before the I/O thread starts reading. The rescue's
  // pass runs the CPU kernels whatever the backend (core/reduction.hpp).
  const Backend backend = s.rescue ? Backend::Cpu : mpi::resolve_backend(ctx.options.backend, comm);
  report.backend = backend;
  std::unique_ptr<ReduceEngine> engine;
  ScaledNorm2Engine* scaled = nullptr;
  mpi::collectively(comm, [&] {
    if (g.chunks == 0)
      return;
    if (!s.rescue) {
      engine = make_reduce_engine(backend, {.dtype = g.dtype, .memory = Memory::Host});
      if (needs_masking(all_ops, missing))
        engine = std::make_unique<MaskedReduceEngine>(std::move(engine), g.dtype, missing,
                                                      backend == Backend::Cpu);
      return;
    }
    TESSERA_REQUIRE(g.dtype == DType::f64 && ops == std::vector<Op>{Op::Norm2}, InternalError,
                    "the Norm2 rescue's pass reduces f64 norms only");
    Norm2Exponents e = *s.rescue;
    if (axis == Axis::Cols) { // this rank's stripe of columns
      const BlockDistribution st = g.stripes();
      e.cols.assign(s.rescue->cols.begin() + st.begin(rank), s.rescue->cols.begin() + st.end(rank));
    }
    auto p = std::make_unique<ScaledNorm2Engine>(Memory::Host, std::move(e));
    scaled = p.get();
    engine = std::move(p);
    if (missing.any())
      engine = std::make_unique<MaskedReduceEngine>(std::move(engine), g.dtype, missing);
  });
  mpi::collectively(comm, [&] { s.go.push(g); });

  std::vector<Accumulator> acc;
  for (Op op : all_ops) {
    Accumulator a{op, identity(op), identity(op), identity(op), {}, {}, {}};
    if (axis == Axis::Cols) {
      a.values.assign(static_cast<std::size_t>(g.stripes().rows(rank)), identity(op));
      a.open = a.values;
      a.supers = a.values;
    } else if (axis == Axis::Rows)
      a.values.reserve(static_cast<std::size_t>(g.shape.rows));
    acc.push_back(std::move(a));
  }

  const double bytes_per_row =
      static_cast<double>(g.shape.cols) * static_cast<double>(dtype_size(g.dtype));
  detail::ProgressMeter progress("reduce", bytes_per_row * static_cast<double>(g.shape.rows),
                                 ctx.options.progress && rank == 0, ctx.options.progress_interval);
  std::optional<Slot> done;
  for (std::int64_t c = 0; c < g.chunks; ++c) {
    Slot slot;
    mpi::collectively(comm, [&] {
      if (done)
        s.ring.free.push(*done);
      done.reset();
      slot = detail::pop_chunk(s.ring.full, c, "read-ahead");
      detail::inject_fault(ctx.fault, FaultSite::Compute, rank, c);
    });
    dispatch_real_dtype(g.dtype, [&](auto tag) {
      using T = decltype(tag);
      reduce_chunk(g, c, rank, static_cast<const T*>(slot.buffer->data()), *engine, scaled, acc,
                   comm, ctx.compute_timers);
    });
    const double t0 = wall_seconds();
    detail::delay_ms(ctx.compute_delay_ms);
    ctx.compute_timers.add("compute", wall_seconds() - t0);
    progress.add(bytes_per_row * static_cast<double>(g.rows(c)));
    done = slot;
  }
  mpi::collectively(comm, [&] {
    if (done)
      s.ring.free.push(*done);
  });
  progress.finish();

  ReduceResult result;
  result.axis = axis;
  result.ops = ops;
  const double rows = static_cast<double>(g.shape.rows), cols = static_cast<double>(g.shape.cols);
  // Combined values along the axis, per op of all_ops, finished below.
  std::vector<std::vector<double>> raw;
  for (Accumulator& a : acc) {
    if (axis == Axis::All) {
      cpu::close_partials(a.op, &a.total, &a.super, 1);
      raw.push_back({a.total});
    } else if (axis == Axis::Rows) {
      raw.push_back(std::move(a.values));
    } else {
      cpu::close_partials(a.op, a.values.data(), a.supers.data(),
                          static_cast<std::int64_t>(a.values.size()));
      std::vector<double> all;
      const double t0 = wall_seconds();
      all = mpi::allgatherv(comm, a.values, counts_of(g.stripes()));
      ctx.compute_timers.add("exchange", wall_seconds() - t0,
                             static_cast<double>(all.size() * sizeof(double)));
      raw.push_back(std::move(all));
    }
  }
  const auto count_at = std::find(all_ops.begin(), all_ops.end(), Op::Count);
  const std::vector<double>* counts =
      missing.any() && count_at != all_ops.end() ? &raw[count_at - all_ops.begin()] : nullptr;
  const double n = axis == Axis::All ? rows * cols : axis == Axis::Rows ? cols : rows;
  for (std::size_t k = 0; k < ops.size(); ++k) { // the ops asked for, without a hidden Count
    std::vector<double> v = raw[k];
    finalize_counted(ops[k], v, counts, n);
    result.values.push_back(std::move(v));
  }
  return result;
}

} // namespace

namespace detail {

ReducePass reduce_pass(const io::DatasetRef& in, const std::vector<Op>& ops, Axis axis,
                       const OutOfCoreOptions& options, MPI_Comm comm, const Norm2Exponents* rescue,
                       bool extra) {
  Shared s(comm, options, in, rescue, extra || rescue);
  ReducePass pass;
  detail::run_sides(
      *s.ctx.io, [&] { io_side(s); },
      [&] { pass.result = compute_side(s, ops, axis, pass.report, pass.dtype); },
      [&](std::exception_ptr e) { s.abort(e); });
  detail::finish_report(s.ctx, pass.report, s.ring, nullptr);
  return pass;
}

} // namespace detail

ReduceResult reduce_out_of_core(const io::DatasetRef& in, const std::vector<Op>& ops, Axis axis,
                                const OutOfCoreOptions& options, MPI_Comm comm,
                                OutOfCoreReport* report) {
  detail::ReducePass pass = detail::reduce_pass(in, ops, axis, options, comm, nullptr);
  detail::rescue_norm2(in, axis, options, comm, pass);
  if (report)
    *report = pass.report;
  return std::move(pass.result);
}

} // namespace tessera::ops
