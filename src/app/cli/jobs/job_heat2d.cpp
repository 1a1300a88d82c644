// Job kind "heat2d": the ADI diffusion solver (src/app/solver/) driven by a deck. Keys and their
// meaning: docs/decks.md and the commented example inputs/heat2d.toml.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "cli/jobs/jobs.hpp"
#include "cli/jobs/run_info.hpp"
#include "core/format_bytes.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_file.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"
#include "mpi/collectives.hpp"
#include "mpi/communicator.hpp"
#include "ops/host_matrix.hpp"
#include "ops/out_of_core_choice.hpp"
#include "solver/checkpoint.hpp"
#include "solver/checkpoint_files.hpp"
#include "solver/initial_file.hpp"
#include "solver/run.hpp"
#include "solver/stop_signal.hpp"

namespace tessera::app {

namespace {

std::string initial_problem(const DeckValue& v) {
  try {
    heat2d::parse_initial(std::get<std::string>(v));
  } catch (const InputError&) {
    return fmt::format("must be sine, gaussian, an HDF5 dataset FILE.h5:/path or a state of "
                       "one, FILE.h5:/path[k] ([-1]: the last), got '{}'",
                       std::get<std::string>(v));
  }
  return {};
}

} // namespace

// The ranges here are those of heat2d::find_invalid; the rules between keys (lines per rank,
// representable line systems) are checked by check_heat2d_job.
void heat2d_schema(DeckSchema& s) {
  s.add("grid.nx", std::int64_t{256},
        "unknowns along x (interior points for Dirichlet); >= 1 and >= the ranks", 1);
  s.add("grid.ny", std::int64_t{256}, "unknowns along y; >= 1 and >= the ranks", 1);
  s.add("grid.lx", 1.0, "domain length along x (> 0)").greater_than(0);
  s.add("grid.ly", 1.0, "domain length along y (> 0)").greater_than(0);
  s.add("physics.alpha", 1.0, "diffusivity alpha in u_t = alpha (u_xx + u_yy) (> 0)")
      .greater_than(0);
  s.add("time.dt", 1e-4, "time step (> 0; ADI is unconditionally stable, accuracy O(dt^2))")
      .greater_than(0);
  s.add("time.steps", std::int64_t{100}, "the run ends at this step", 0);
  s.add("initial.kind", std::string("sine"),
        "sine (exact solution known), gaussian, an HDF5 dataset FILE.h5:/path [ny, nx], or "
        "FILE.h5:/path[k], state k of a 3-D dataset (run.h5:/fields/u[-1]: a run's last "
        "snapshot), starting at its time")
      .checked_by(initial_problem);
  s.add("initial.width", 0.0, "gaussian: standard deviation (0: a tenth of the shorter side)", 0.0);
  s.add("boundary.kind", std::string("dirichlet"), "dirichlet or periodic",
        {"dirichlet", "periodic"});
  s.add("boundary.value", 0.0, "dirichlet: the value of u on the boundary");
  s.add("output.file", std::string("heat2d.h5"), "HDF5 output; \"\" writes none");
  s.add("output.snapshot_every", std::int64_t{0},
        "store u every this many steps (0: the initial and the last state only)", 0);
  s.add("output.diagnostics_every", std::int64_t{10},
        "diagnostics and a progress line every this many steps (0: first and last only)", 0);
  s.add("output.checkpoint_every", std::int64_t{0},
        "write a checkpoint every this many steps (0: only on SIGTERM / SIGUSR1)", 0);
  s.add("output.checkpoint_file", std::string(""),
        "checkpoint path (\"\": the output name with .ckpt.h5)");
  s.add("output.checkpoint_keep", std::int64_t{0},
        "0: one checkpoint file, replaced by each checkpoint; N: every checkpoint also gets a "
        "numbered name (NAME.ckpt.<step>.h5) and the N newest are kept",
        0);
  s.add("output.snapshot_queue", std::int64_t{2},
        "snapshots waiting for the I/O thread before stepping waits", 1);
  s.add("restart.file", std::string(""), "continue from this checkpoint (\"\": start afresh)");
  s.add("transpose.exchange", std::string("auto"),
        "auto, alltoallv, pairwise, pipelined, shared (one node), nccl",
        {"auto", "alltoallv", "pairwise", "pipelined", "shared", "nccl"});
  s.add("solver.line_solve", std::string("transpose"),
        "several CPU ranks: transpose (the same bits on any rank count) or distributed (a "
        "reduced system, no transposes)",
        {"transpose", "distributed"});
}

namespace {

// The output and the checkpoint must be different files.
void check_output_names(const Deck& deck) {
  const auto output = deck.get<std::string>("output.file");
  const auto given = deck.get<std::string>("output.checkpoint_file");
  const std::string checkpoint = given.empty() ? heat2d::checkpoint_path(output) : given;
  // Both would be written to one file: the checkpoint would replace the output, or the output
  // the checkpoint needed for a restart.
  if (!output.empty() && io::same_file(output, checkpoint))
    deck.problem(given.empty() ? "output.file" : "output.checkpoint_file",
                 fmt::format("the checkpoint '{}' and the output '{}' are the same file; give "
                             "each a name of its own",
                             checkpoint, output));
}

// The run settings of a checked deck for `nranks` ranks; what heat2d::find_invalid refuses is
// recorded as deck problems (check_heat2d_job reads the settings once for them).
heat2d::RunSettings settings_from(const Deck& deck, int nranks) {
  heat2d::RunSettings s;
  heat2d::Config& c = s.config;
  c.nx = deck.get<std::int64_t>("grid.nx");
  c.ny = deck.get<std::int64_t>("grid.ny");
  c.lx = deck.get<double>("grid.lx");
  c.ly = deck.get<double>("grid.ly");
  c.alpha = deck.get<double>("physics.alpha");
  c.dt = deck.get<double>("time.dt");
  // Keys whose value the schema refused are not parsed: the run never comes.
  const auto ok = [&](const char* key) { return !deck.has_problem(key); };
  if (ok("boundary.kind"))
    c.boundary = heat2d::parse_boundary(deck.get<std::string>("boundary.kind"));
  c.boundary_value = deck.get<double>("boundary.value");
  if (ok("transpose.exchange"))
    c.exchange = parse_exchange(deck.get<std::string>("transpose.exchange"));
  if (ok("solver.line_solve"))
    c.line_solve = heat2d::parse_line_solve(deck.get<std::string>("solver.line_solve"));
  for (const auto& bad : heat2d::find_invalid(c, nranks))
    deck.problem(bad.key, bad.message);
  if (ok("initial.kind"))
    s.initial = heat2d::parse_initial(deck.get<std::string>("initial.kind"));
  s.initial.width = deck.get<double>("initial.width");
  s.steps = deck.get<std::int64_t>("time.steps");
  s.snapshot_every = deck.get<std::int64_t>("output.snapshot_every");
  s.diagnostics_every = deck.get<std::int64_t>("output.diagnostics_every");
  s.checkpoint_every = deck.get<std::int64_t>("output.checkpoint_every");
  s.checkpoint_keep = deck.get<std::int64_t>("output.checkpoint_keep");
  s.queue_capacity = static_cast<std::size_t>(
      std::max<std::int64_t>(1, deck.get<std::int64_t>("output.snapshot_queue")));
  s.output_file = deck.get<std::string>("output.file");
  s.checkpoint_file = deck.get<std::string>("output.checkpoint_file");
  s.restart_file = deck.get<std::string>("restart.file");
  return s;
}

// Collective. A run restarted from the checkpoint file it will itself replace (extending a
// finished run: --restart heat2d.ckpt.h5) would store a deck naming a file that no longer holds
// the state it started from. That state first gets a numbered name of its own
// (solver/checkpoint_files.hpp), which this run uses and its stored deck names. Returns the deck
// text to store.
std::string stable_restart(const Deck& deck, heat2d::RunSettings& s, MPI_Comm comm) {
  const std::string checkpoint =
      s.checkpoint_file.empty() ? heat2d::checkpoint_path(s.output_file) : s.checkpoint_file;
  if (s.restart_file.empty() || !io::same_file(s.restart_file, checkpoint))
    return deck.effective_toml();
  std::string numbered;
  mpi::collectively(comm, [&] {
    const io::H5File f = io::H5File::open_read(s.restart_file, comm);
    const auto step = io::read_int_attribute(f, "/", "step");
    TESSERA_REQUIRE(step.has_value(), InputError,
                    "'{}' has no attribute 'step': not a heat2d checkpoint", s.restart_file);
    numbered = heat2d::numbered_checkpoint_path(checkpoint, *step);
  });
  mpi::collectively(comm, [&] {
    if (mpi::comm_rank(comm) == 0)
      heat2d::link_checkpoint(s.restart_file, numbered);
  });
  log::info("restart.file '{}' is the checkpoint this run replaces: it starts from '{}', the same "
            "file under a name of its own",
            s.restart_file, numbered);
  s.restart_file = numbered;
  Deck stored = Deck::from_string(deck.effective_toml(), deck.source());
  std::string quoted;
  for (const char c : numbered)
    quoted += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  stored.apply_override("restart.file=\"" + quoted + "\"");
  DeckSchema schema;
  common_schema(schema, "heat2d");
  heat2d_schema(schema);
  stored.validate(schema);
  return stored.effective_toml();
}

// Rank 0 prints the timing table and a summary on stdout (scripts/quickstart.sh shows it):
// the error against the exact solution, time per step, throughput, memory traffic, output.
void print_summary(const heat2d::RunSettings& s, const heat2d::RunResult& r, const Context& ctx) {
  // Field bytes one step moves, over all ranks (solver.hpp: bytes_per_step).
  const double bytes = mpi::sum_over_ranks(ctx.comm, r.bytes_per_step);
  if (ctx.rank != 0 || log_verbosity() == Verbosity::Quiet) // -q: errors only
    return;
  const heat2d::Config& c = s.config;
  const std::int64_t stepped = r.steps_done - r.start_step;
  const double cells = static_cast<double>(c.nx) * static_cast<double>(c.ny);
  std::string out = timing_report(ctx, r.timing_table, r.timing_json, s.provenance.backend);
  out += fmt::format("\nheat2d: {} x {}, steps {} to {} of {} (t = {:.6g}){}\n", c.nx, c.ny,
                     r.start_step, r.steps_done, s.steps, static_cast<double>(r.steps_done) * c.dt,
                     r.interrupted ? fmt::format(", stopped by {}", heat2d::signal_name(r.signal))
                                   : std::string());
  if (!r.diagnostics.l2_error.empty() && !std::isnan(r.diagnostics.l2_error.back()))
    out += fmt::format(
        "  error against the exact solution   l2 {:.6e}   linf {:.6e}   (t = {:.6g})\n",
        r.diagnostics.l2_error.back(), r.diagnostics.linf_error.back(), r.diagnostics.time.back());
  if (stepped > 0 && r.step_seconds > 0) {
    const double per_step = r.step_seconds / static_cast<double>(stepped);
    out += fmt::format("  time per step                      {:.4g} ms   ({:.3g} cell updates/s)\n",
                       1e3 * per_step, cells / per_step);
    if (c.line_solve == heat2d::LineSolve::Distributed && ctx.nranks > 1 &&
        c.backend == Backend::Cpu)
      out += fmt::format("  reduced-system exchange            {:.0f}% of the step\n",
                         100.0 * r.reduced_seconds / r.step_seconds);
    else
      out += fmt::format("  transposes                         {:.0f}% of the step\n",
                         100.0 * r.transpose_seconds / r.step_seconds);
    out +=
        fmt::format("  memory traffic                     {:.4g} MB per step ({:.0f} B per cell), "
                    "{:.3g} GB/s\n",
                    bytes * 1e-6, bytes / cells, bytes / per_step * 1e-9);
  }
  if (r.snapshot_wait_seconds > 0)
    out += fmt::format("  waiting on snapshot I/O            {:.3g} s\n", r.snapshot_wait_seconds);
  out += fmt::format("  output                             {}\n",
                     s.output_file.empty() ? std::string("(none)") : s.output_file);
  if (!r.checkpoint.empty())
    out += fmt::format("  checkpoint                         {}\n", r.checkpoint);
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
}

} // namespace

void check_heat2d_job(const Deck& deck, int nranks) {
  settings_from(deck, nranks);
  if (!deck.has_problem("output.file") && !deck.has_problem("output.checkpoint_file"))
    check_output_names(deck);
}

void check_heat2d_files(const Deck& deck, MPI_Comm comm) {
  // A grid the deck got wrong would make every file look of the wrong shape.
  for (const char* key : {"grid.nx", "grid.ny", "initial.kind", "time.steps"})
    if (deck.has_problem(key))
      return;
  const heat2d::RunSettings s = settings_from(deck, mpi::comm_size(comm));
  // Every rank opens the same files and fails the same way (the errors are collective): each
  // records the same problems.
  const auto record = [&](const char* key, const std::function<void()>& fn) {
    try {
      fn();
    } catch (const Error& e) {
      // The problem names the key already: "initial.kind: …" in the message would repeat it.
      std::string m = e.what();
      if (const std::string prefix = std::string(key) + ": "; m.rfind(prefix, 0) == 0)
        m.erase(0, prefix.size());
      deck.problem(key, m);
    }
  };
  if (s.initial.kind == heat2d::InitialKind::File && s.restart_file.empty())
    record("initial.kind", [&] {
      const io::H5File f = io::H5File::open_read(s.initial.file, comm);
      const heat2d::InitialSource src = heat2d::inspect_initial(f, s.initial, s.config);
      TESSERA_REQUIRE(src.start_step <= s.steps, InputError,
                      "'{}' is the state at step {}, past time.steps = {}",
                      heat2d::initial_name(s.initial), src.start_step, s.steps);
    });
  if (!s.restart_file.empty() && !deck.has_problem("restart.file"))
    record("restart.file", [&] {
      const io::H5File f = io::H5File::open_read(s.restart_file, comm);
      const std::int64_t step = heat2d::inspect_checkpoint(f, s.config, s.initial);
      TESSERA_REQUIRE(step <= s.steps, InputError,
                      "checkpoint '{}' is at step {}, past time.steps = {}", s.restart_file, step,
                      s.steps);
    });
}

int run_heat2d_job(const Deck& deck, const Context& ctx) {
  heat2d::RunSettings s;
  mpi::collectively(ctx.comm, [&] {
    s = settings_from(deck, ctx.nranks);
    deck.throw_problems(); // none: load_deck() checked the deck
  });
  // Collective: auto is CUDA when every rank has a GPU (the state then stays on the GPUs).
  s.config.backend =
      mpi::resolve_backend(parse_backend(deck.get<std::string>("job.backend")), ctx.comm);
  s.provenance = make_provenance(ctx, stable_restart(deck, s, ctx.comm), s.config.backend);
  const heat2d::Config& c = s.config;
  log::info("heat2d: {} x {} unknowns, {} boundaries, initial {}, dt {}, {} steps, {} ranks x {} "
            "threads ({})",
            c.nx, c.ny, heat2d::boundary_name(c.boundary), heat2d::initial_name(s.initial), c.dt,
            s.steps, ctx.nranks, s.provenance.threads, s.provenance.backend);
  // The grid lives in memory, at least three fields of it per rank (the state, the explicit
  // half and the lines being solved): one that does not fit what a rank may use fails now, with a
  // message, rather than by the kernel's OOM killer at the first step.
  const auto [room, room_source] = ops::room_per_rank(ctx.comm);
  mpi::collectively(ctx.comm, [&] {
    const double need = 3.0 * ops::in_memory_bytes({{c.nx, c.ny}, DType::f64, false}, ctx.nranks);
    if (need > room)
      TESSERA_THROW(ResourceError,
                    "heat2d: the {} x {} grid needs at least {} per rank in memory, more than "
                    "the {} this process may use ({}); run on more ranks or nodes",
                    c.nx, c.ny, format_bytes(need), format_bytes(room), room_source);
  });
  // main() installed the stop handlers before MPI started (StopSignals::catch_until_exit): a
  // signal during the set-up is kept and ends the run before its first step.
  const heat2d::RunResult r = heat2d::run(s, ctx.comm);
  // A stop signal that came after the last step found nothing left to stop: the run is complete,
  // no checkpoint was written and the exit status stays 0 (jobs/heat2d-requeue.sbatch tells this
  // case from a stop by the missing checkpoint).
  if (!r.interrupted && heat2d::StopSignals::pending() != 0)
    log::info("{} arrived after the last step: the run is complete",
              heat2d::signal_name(heat2d::StopSignals::pending()));

  if (r.interrupted) {
    log::info("stopped by {} {} {} of {}: checkpoint written to '{}'; continue with\n  {} "
              "--set restart.file={}",
              heat2d::signal_name(r.signal),
              r.steps_done == r.start_step ? "before the first step, at step" : "at step",
              r.steps_done, s.steps, r.checkpoint, ctx.command_line, r.checkpoint);
  }
  print_summary(s, r, ctx);
  return 0;
}

} // namespace tessera::app
