// The heat2d run loop: initial state, stepping, diagnostics, snapshots, checkpoints, signals.
#include "solver/run.hpp"

#include <fmt/format.h>

#include <cmath>
#include <deque>
#include <future>
#include <optional>
#include <random>

#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/h5_matrix.hpp"
#include "io/h5_turns.hpp"
#include "io/io_thread.hpp"
#include "io/same_file.hpp"
#include "mpi/agreement.hpp"
#include "mpi/collectives.hpp"
#include "mpi/communicator.hpp"
#include "mpi/timing_table.hpp"
#include "solver/checkpoint.hpp"
#include "solver/checkpoint_files.hpp"
#include "solver/initial_file.hpp"
#include "solver/output.hpp"
#include "solver/solver.hpp"
#include "solver/stop_signal.hpp"

namespace tessera::heat2d {

namespace {

bool due(std::int64_t n, std::int64_t every) {
  return every > 0 && n % every == 0;
}

std::string new_run_id() {
  std::random_device rd;
  const unsigned long long hi = rd(), lo = rd();
  return fmt::format("{:08x}{:08x}", hi & 0xffffffffULL, lo & 0xffffffffULL);
}

std::string format_duration(double s) {
  if (s < 120)
    return fmt::format("{:.0f} s", s);
  if (s < 7200)
    return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

void check_schedule(const RunSettings& s) {
  TESSERA_REQUIRE(s.steps >= 0, InputError, "time.steps must not be negative, got {}", s.steps);
  TESSERA_REQUIRE(s.snapshot_every >= 0, InputError,
                  "output.snapshot_every must not be negative, got {}", s.snapshot_every);
  TESSERA_REQUIRE(s.diagnostics_every >= 0, InputError,
                  "output.diagnostics_every must not be negative, got {}", s.diagnostics_every);
  TESSERA_REQUIRE(s.checkpoint_keep >= 0, InputError,
                  "output.checkpoint_keep must not be negative, got {}", s.checkpoint_keep);
  TESSERA_REQUIRE(s.checkpoint_every >= 0, InputError,
                  "output.checkpoint_every must not be negative, got {}", s.checkpoint_every);
  const std::string checkpoint =
      s.checkpoint_file.empty() ? checkpoint_path(s.output_file) : s.checkpoint_file;
  TESSERA_REQUIRE(s.output_file.empty() || !io::same_file(s.output_file, checkpoint), InputError,
                  "the checkpoint '{}' and the output '{}' are the same file; give each a name "
                  "of its own",
                  checkpoint, s.output_file);
}

// Periodic checkpoints are written behind the computation; the next one (or the end of the run)
// waits for the previous, so at most one is in flight.
class Checkpointer {
public:
  Checkpointer(io::IoThread& io, const RunSettings& s, const Solver& solver, std::string path,
               PhaseTimers& timers)
      : io_(io), settings_(s), comm_(solver.comm()), dist_x_(solver.layout_x()),
        path_(std::move(path)), timers_(timers) {}
  ~Checkpointer() {
    if (pending_.valid())
      pending_.wait();
  }

  void write(Solver& solver, const std::string& run_id, const DiagnosticsSeries& series,
             bool wait) {
    this->wait();
    ScopedPhase p(timers_, "checkpoints");
    auto state = std::make_shared<CheckpointState>();
    state->step = solver.steps_done();
    state->time = solver.time();
    state->run_id = run_id;
    state->diagnostics = series;
    state->field_x.resize(static_cast<std::size_t>(dist_x_.local_size(solver.rank())));
    solver.get_field_x(state->field_x.data());
    const bool with_error = settings_.initial.kind == InitialKind::Sine;
    // keep 0: one file, replaced; else a numbered file per checkpoint, path_ naming the newest.
    const std::string file =
        settings_.checkpoint_keep > 0 ? numbered_checkpoint_path(path_, state->step) : path_;
    pending_ = io_.submit([this, state, with_error, file] {
      write_checkpoint(file, io_.comm(), settings_.config, settings_.initial, settings_.provenance,
                       dist_x_, *state, with_error);
      if (file != path_)
        rotate(file);
    });
    written_ = file;
    written_step_ = state->step;
    if (wait)
      this->wait();
  }

  // Collective: waits for the checkpoint in flight; every rank throws if it failed.
  void wait() {
    if (!pending_.valid())
      return;
    ScopedPhase p(timers_, "checkpoints");
    mpi::collectively(comm_, [&] { pending_.get(); });
  }
  const std::string& written() const noexcept { return written_; }
  std::int64_t written_step() const noexcept { return written_step_; }

private:
  // I/O thread: path_ names the new numbered checkpoint; the oldest beyond the kept number go.
  void rotate(const std::string& file) {
    mpi::collectively(io_.comm(), [&] {
      if (mpi::comm_rank(io_.comm()) == 0)
        link_checkpoint(file, path_);
    });
    numbered_.push_back(file);
    while (static_cast<std::int64_t>(numbered_.size()) > settings_.checkpoint_keep) {
      if (mpi::comm_rank(io_.comm()) == 0 && numbered_.front() != settings_.restart_file)
        remove_checkpoint(numbered_.front());
      numbered_.pop_front();
    }
  }

  io::IoThread& io_;
  const RunSettings& settings_;
  MPI_Comm comm_;
  BlockDistribution dist_x_;
  std::string path_, written_;
  std::int64_t written_step_ = -1;
  PhaseTimers& timers_;
  std::future<void> pending_;
  std::deque<std::string> numbered_; // I/O thread only
};

// Collective: the initial state from a dataset [ny, nx] or a slab of a 3-D one (read on the I/O
// thread); the run starts at the slab's time.
void read_initial(io::IoThread& io, Solver& solver, const RunSettings& s) {
  std::vector<double> x(static_cast<std::size_t>(solver.layout_x().local_size(solver.rank())));
  auto read = io.submit([&] {
    const io::H5File f = io::H5File::open_read(s.initial.file, io.comm());
    const InitialSource src = inspect_initial(f, s.initial, s.config);
    read_initial_rows(f, s.initial, src, solver.layout_x(), solver.rank(), x.data());
    return src.start_step;
  });
  std::int64_t start = 0;
  mpi::collectively(solver.comm(), [&] {
    start = read.get();
    TESSERA_REQUIRE(start <= s.steps, InputError,
                    "initial.kind: '{}' is the state at step {}, past time.steps = {}",
                    initial_name(s.initial), start, s.steps);
  });
  solver.set_field_x(x.data());
  solver.set_steps_done(start);
}

Diagnostics series_last(const DiagnosticsSeries& s) {
  const std::size_t k = s.size() - 1;
  return {s.step[k], s.time[k], s.total[k], s.min[k], s.max[k], s.l2_error[k], s.linf_error[k]};
}

void log_progress(const Diagnostics& d, std::int64_t steps, double rate, std::int64_t left) {
  std::string err;
  if (!std::isnan(d.l2_error))
    err = fmt::format("  l2_error {:.3e}  linf_error {:.3e}", d.l2_error, d.linf_error);
  log::info("step {}/{}  t = {:.6g}  total {:.10g}  min {:.6g}  max {:.6g}{}{}", d.step, steps,
            d.time, d.total, d.min, d.max, err,
            rate > 0 ? fmt::format("  ({:.3g} steps/s, ETA {})", rate,
                                   format_duration(static_cast<double>(left) / rate))
                     : std::string());
}

// Whether the field is finite, from its diagnostics: a NaN or an infinity anywhere makes the sum
// (and so the total) non-finite. The reductions give every rank the same values.
bool finite_state(const Diagnostics& d) {
  return std::isfinite(d.total) && std::isfinite(d.min) && std::isfinite(d.max);
}

// Collective: throws NumericalError on every rank when `d` is not finite. `what` says which
// state was checked; `kept` names the last checkpoint of a finite state ("" when none).
void require_finite(MPI_Comm comm, const Diagnostics& d, const std::string& what,
                    const std::string& kept) {
  mpi::collectively(comm, [&] {
    if (finite_state(d))
      return;
    TESSERA_THROW(NumericalError, "heat2d: {} is not finite (total {}, min {}, max {}); {}", what,
                  d.total, d.min, d.max,
                  kept.empty() ? std::string("no checkpoint was written") : kept);
  });
}

} // namespace

std::string checkpoint_path(const std::string& output_file) {
  if (output_file.empty())
    return "heat2d.ckpt.h5";
  const std::string ext = ".h5";
  if (output_file.size() > ext.size() &&
      output_file.compare(output_file.size() - ext.size(), ext.size(), ext) == 0)
    return output_file.substr(0, output_file.size() - ext.size()) + ".ckpt.h5";
  return output_file + ".ckpt.h5";
}

RunResult run(const RunSettings& s, MPI_Comm comm) {
  // First, so that a stop signal during the set-up (which can take seconds) is kept.
  std::optional<StopSignals> signals;
  if (s.handle_signals)
    signals.emplace();
  mpi::collectively(comm, [&] {
    validate(s.config, mpi::comm_size(comm));
    check_schedule(s);
  });
  PhaseTimers timers;
  Solver solver(s.config, comm, &timers);
  io::IoThread io(comm);
  const Exact exact(s.config, s.initial, solver.layout_y(), solver.rank());
  DiagnosticsPlan diagnostics(solver, exact, &timers);
  StopAgreement stop(comm);

  RunResult result;
  DiagnosticsSeries& series = result.diagnostics;
  // The last checkpoint of a finite state, for the message when the state stops being finite.
  std::string kept;
  if (!s.restart_file.empty()) {
    auto read = io.submit([&] {
      return read_checkpoint(s.restart_file, io.comm(), s.config, s.initial, solver.layout_x());
    });
    CheckpointState state;
    mpi::collectively(comm, [&] {
      state = read.get();
      TESSERA_REQUIRE(state.step <= s.steps, InputError,
                      "checkpoint '{}' is at step {}, past time.steps = {}", s.restart_file,
                      state.step, s.steps);
    });
    solver.set_field_x(state.field_x.data());
    solver.set_steps_done(state.step);
    series = std::move(state.diagnostics);
    series.truncate_after(state.step);
    result.run_id = state.run_id;
    require_finite(
        comm, diagnostics.compute(solver),
        fmt::format("the field of checkpoint '{}' (step {})", s.restart_file, state.step), "");
    kept = fmt::format("the checkpoint this run started from, '{}' (step {}), is kept",
                       s.restart_file, state.step);
    log::info("restarting from '{}' at step {} (t = {:.6g})", s.restart_file, state.step,
              solver.time());
  } else {
    result.run_id = new_run_id();
    mpi::broadcast(comm, result.run_id); // rank 0's: the same everywhere
    if (s.initial.kind == InitialKind::File)
      read_initial(io, solver, s);
    else
      fill_initial(s.config, s.initial, solver.layout_y(), solver.rank(),
                   solver.mutable_field_y().data());
    series.append(diagnostics.compute(solver));
    require_finite(comm, series_last(series),
                   fmt::format("the initial field (step {}, initial.kind = {})",
                               solver.steps_done(), initial_name(s.initial)),
                   "");
    log_progress(series_last(series), s.steps, 0, 0);
  }
  result.start_step = solver.steps_done();

  std::optional<Output> output;
  if (!s.output_file.empty()) {
    OutputSettings os{s.output_file, s.provenance, result.run_id, s.restart_file, s.queue_capacity};
    output.emplace(io, solver, s.initial, std::move(os), &timers);
    const bool restarted = !s.restart_file.empty();
    if (!restarted || output->carry_over(s.output_file, result.start_step) == 0)
      output->snapshot(solver);
  }
  Checkpointer checkpointer(
      io, s, solver, s.checkpoint_file.empty() ? checkpoint_path(s.output_file) : s.checkpoint_file,
      timers);
  // Checked at diagnostics steps (the last step is one) and before every checkpoint, so that a
  // checkpoint always holds a finite state.
  std::int64_t checked = solver.steps_done();
  const auto check = [&](const Diagnostics& d) {
    if (!finite_state(d) && !checkpointer.written().empty()) { // the same on every rank
      checkpointer.wait(); // the last one is whole before the run stops
      kept = fmt::format("the last checkpoint, '{}' (step {}), holds the last checked finite "
                         "state and is kept",
                         checkpointer.written(), checkpointer.written_step());
    }
    require_finite(
        comm, d,
        fmt::format("the field at step {} (finite at step {}, the check before)", d.step, checked),
        kept);
    checked = d.step;
  };

  // A stop signal that came during the set-up ends the run before its first step, with a
  // checkpoint of the state it starts from (so that a stopped run always leaves one).
  int signal = solver.steps_done() < s.steps ? stop.any(StopSignals::pending()) : 0;
  if (signal != 0)
    checkpointer.write(solver, result.run_id, series, true);
  // A run that writes no output and names no checkpoint leaves no files.
  const bool final_checkpoint = !s.output_file.empty() || !s.checkpoint_file.empty();
  const double t0 = wall_seconds();
  while (signal == 0 && solver.steps_done() < s.steps) {
    const double ts = wall_seconds();
    solver.step();
    result.step_seconds += wall_seconds() - ts;
    const std::int64_t n = solver.steps_done();
    const bool last = n == s.steps;
    if (s.after_step)
      s.after_step(n, solver);
    if (last || due(n, s.diagnostics_every)) {
      series.append(diagnostics.compute(solver));
      check(series_last(series));
      const double rate = static_cast<double>(n - result.start_step) / (wall_seconds() - t0);
      log_progress(series_last(series), s.steps, rate, s.steps - n);
    }
    if (output && (last || due(n, s.snapshot_every)))
      output->snapshot(solver);
    signal = stop.any(StopSignals::pending());
    // The last step is checkpointed too, so that a finished run can be extended (a longer
    // time.steps) from where it ended, keeping its snapshots.
    if (signal != 0 || due(n, s.checkpoint_every) || (last && final_checkpoint)) {
      if (checked != n)
        check(diagnostics.compute(solver));
      checkpointer.write(solver, result.run_id, series, signal != 0);
    }
  }
  if (signal != 0) {
    result.interrupted = true;
    result.signal = signal;
  }
  checkpointer.wait();
  result.steps_done = solver.steps_done();
  result.checkpoint = checkpointer.written();
  if (output) {
    output->finish(series, !result.interrupted, result.steps_done);
    result.snapshot_wait_seconds = output->wait_seconds();
  }
  io.finish();
  if (result.interrupted)
    StopSignals::clear();

  const auto& phases = timers.phases();
  if (const auto it = phases.find(kTransposePhase); it != phases.end())
    result.transpose_seconds = it->second.seconds;
  if (const auto it = phases.find(kReducedPhase); it != phases.end())
    result.reduced_seconds = it->second.seconds;
  result.bytes_per_step = solver.bytes_per_step();
  result.timing_table = mpi::timing_table(timers, comm);
  result.timing_json = mpi::timing_json(timers, comm);
  if (s.keep_final_field) {
    result.final_field_x.resize(
        static_cast<std::size_t>(solver.layout_x().local_size(solver.rank())));
    solver.get_field_x(result.final_field_x.data());
  }
  return result;
}

} // namespace tessera::heat2d
