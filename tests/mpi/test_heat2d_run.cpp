// Whole heat2d runs: validation of the settings, the output file layout, an initial condition
// read from a dataset, checkpoints, and a run stopped by a signal on one rank and restarted from
// its checkpoint ending bit for bit where the uninterrupted run ends — snapshots and diagnostics
// included.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/h5_array.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "solver/run.hpp"
#include "solver/solver.hpp"
#include "solver/stop_signal.hpp"
#include "test_heat2d_support.hpp"

namespace {

using namespace tessera::heat2d;
using heat2d_test::rank_of;
using heat2d_test::size_of;
namespace h5 = tessera::io::nd;
namespace io = tessera::io;

RunSettings base_settings(const std::string& output, Boundary b, const char* initial) {
  RunSettings s;
  s.config.nx = 19;
  s.config.ny = 14;
  s.config.lx = 1.0;
  s.config.ly = 0.7;
  s.config.alpha = 0.5;
  s.config.dt = 2e-3;
  s.config.boundary = b;
  s.config.boundary_value = b == Boundary::Dirichlet ? 0.3 : 0.0;
  s.initial = parse_initial(initial);
  s.steps = 23;
  s.snapshot_every = 4;
  s.diagnostics_every = 3;
  s.output_file = output;
  s.handle_signals = true;
  return s;
}

struct OutputContents {
  std::vector<double> u, x, y, time;
  std::vector<std::int64_t> step, diag_step;
  std::vector<std::vector<double>> diag;
  h5::Dims u_dims;
  long long finished = -1, steps_done = -1;
};

// Everything of an output file, read on every rank (the I/O threads are gone by now).
OutputContents read_output(const std::string& path, bool with_error) {
  OutputContents c;
  const io::H5File f = io::H5File::open_read(path, MPI_COMM_WORLD);
  c.u_dims = h5::dims(f, "/fields/u");
  c.u.resize(c.u_dims[0] * c.u_dims[1] * c.u_dims[2]);
  h5::read(f, "/fields/u", h5::Elem::f64, {{0, 0, 0}, c.u_dims}, c.u.data());
  c.x = h5::read_f64_vector(f, "/grid/x");
  c.y = h5::read_f64_vector(f, "/grid/y");
  c.time = h5::read_f64_vector(f, "/fields/time");
  c.step = h5::read_i64_vector(f, "/fields/step");
  c.diag_step = h5::read_i64_vector(f, "/diagnostics/step");
  std::vector<std::string> names = {"time", "total", "min", "max"};
  if (with_error) {
    names.push_back("l2_error");
    names.push_back("linf_error");
  }
  for (const auto& n : names)
    c.diag.push_back(h5::read_f64_vector(f, "/diagnostics/" + n));
  c.finished = io::read_int_attribute(f, "/", "finished").value_or(-1);
  c.steps_done = io::read_int_attribute(f, "/", "steps_done").value_or(-1);
  return c;
}

TEST(Heat2dOutput, HasTheDocumentedLayout) {
  heat2d_test::TempDir dir;
  RunSettings s = base_settings(dir.file("out.h5"), Boundary::Dirichlet, "sine");
  const RunResult r = run(s, MPI_COMM_WORLD);
  EXPECT_FALSE(r.interrupted);
  const OutputContents c = read_output(s.output_file, true);
  // Snapshots at 0, 4, …, 20 and the last step 23.
  const std::vector<std::int64_t> snap_steps = {0, 4, 8, 12, 16, 20, 23};
  EXPECT_EQ(c.step, snap_steps);
  ASSERT_EQ(c.u_dims, (h5::Dims{snap_steps.size(), 14, 19}));
  for (std::size_t k = 0; k < snap_steps.size(); ++k)
    EXPECT_EQ(c.time[k], static_cast<double>(snap_steps[k]) * s.config.dt);
  const std::vector<std::int64_t> diag_steps = {0, 3, 6, 9, 12, 15, 18, 21, 23};
  EXPECT_EQ(c.diag_step, diag_steps);
  EXPECT_EQ(c.x.size(), 19u);
  EXPECT_DOUBLE_EQ(c.x[0], 1.0 / 20);
  EXPECT_DOUBLE_EQ(c.y[13], 14 * 0.7 / 15);
  EXPECT_EQ(c.finished, 1);
  EXPECT_EQ(c.steps_done, 23);
  // The last snapshot is the final field.
  std::vector<double> last(c.u.end() - 14 * 19, c.u.end());
  s.output_file.clear();
  s.keep_final_field = true;
  const RunResult again = run(s, MPI_COMM_WORLD);
  const tessera::BlockDistribution lx({14, 19}, size_of());
  for (std::int64_t k = 0; k < lx.local_size(rank_of()); ++k)
    ASSERT_EQ(again.final_field_x[static_cast<std::size_t>(k)],
              last[static_cast<std::size_t>(lx.begin(rank_of()) * 19 + k)]);
  // Besides the output only its XDMF sidecar: no temporary, no lock.
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.file("out.h5.xmf")));
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name == "out.h5.xmf" || !name.starts_with("out.h5.")) << e.path();
  }
}

TEST(Heat2dOutput, InitialConditionFromADataset) {
  heat2d_test::TempDir dir;
  const unsigned seed = heat2d_test::shared_seed();
  const std::int64_t nx = 19, ny = 14;
  const auto u0 = heat2d_test::random_field(nx, ny, seed);
  {
    const tessera::BlockDistribution d({ny, nx}, size_of());
    io::H5File f = io::H5File::create(dir.file("init.h5"), MPI_COMM_WORLD);
    io::write_rows(f, "/data/u0", d, rank_of(), tessera::DType::f64,
                   u0.data() + d.begin(rank_of()) * nx);
    f.commit();
  }
  RunSettings s = base_settings(dir.file("out.h5"), Boundary::Periodic,
                                (dir.file("init.h5") + ":/data/u0").c_str());
  s.steps = 0;
  run(s, MPI_COMM_WORLD);
  const OutputContents c = read_output(s.output_file, false);
  ASSERT_EQ(c.u.size(), u0.size()) << "seed " << seed;
  EXPECT_EQ(c.u, u0) << "seed " << seed;

  // A dataset of the wrong shape is refused on every rank, naming it.
  s.config.nx = 20;
  try {
    run(s, MPI_COMM_WORLD);
    ADD_FAILURE() << "a 14x19 dataset was accepted for a 14x20 grid";
  } catch (const tessera::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/data/u0"), std::string::npos) << e.what();
  }
}

// Stops the run on one rank only (as a signal reaching one process would) after `step`.
std::function<void(std::int64_t, Solver&)> signal_after(std::int64_t step, int rank, int signal) {
  return [=](std::int64_t n, Solver&) {
    if (n == step && rank_of() == rank)
      std::raise(signal);
  };
}

void check_restart(Boundary b, const char* initial, std::int64_t stop_at, int signal,
                   LineSolve line_solve = LineSolve::Transpose) {
  heat2d_test::TempDir dir;
  const unsigned seed = heat2d_test::shared_seed();
  const int signal_rank = static_cast<int>(seed % static_cast<unsigned>(size_of()));
  const bool with_error = std::string(initial) == "sine";

  RunSettings whole = base_settings(dir.file("whole.h5"), b, initial);
  whole.config.line_solve = line_solve;
  whole.keep_final_field = true;
  const RunResult a = run(whole, MPI_COMM_WORLD);

  RunSettings first = base_settings(dir.file("split.h5"), b, initial);
  first.config.line_solve = line_solve;
  first.after_step = signal_after(stop_at, signal_rank, signal);
  const RunResult stopped = run(first, MPI_COMM_WORLD);
  ASSERT_TRUE(stopped.interrupted) << "seed " << seed;
  EXPECT_EQ(stopped.signal, signal);
  EXPECT_EQ(stopped.steps_done, stop_at);
  EXPECT_EQ(stopped.checkpoint, dir.file("split.ckpt.h5"));
  EXPECT_EQ(StopSignals::pending(), 0);
  const OutputContents partial = read_output(dir.file("split.h5"), with_error);
  EXPECT_EQ(partial.finished, 0);
  EXPECT_EQ(partial.steps_done, stop_at);

  RunSettings second = base_settings(dir.file("split.h5"), b, initial);
  second.config.line_solve = line_solve;
  second.restart_file = stopped.checkpoint;
  second.keep_final_field = true;
  const RunResult c = run(second, MPI_COMM_WORLD);
  EXPECT_FALSE(c.interrupted);
  EXPECT_EQ(c.start_step, stop_at);
  EXPECT_EQ(c.steps_done, whole.steps);
  EXPECT_EQ(c.run_id, stopped.run_id);
  ASSERT_EQ(c.final_field_x, a.final_field_x) << "seed " << seed << ": final fields differ";

  const OutputContents x = read_output(dir.file("whole.h5"), with_error);
  const OutputContents y = read_output(dir.file("split.h5"), with_error);
  EXPECT_EQ(x.u_dims, y.u_dims);
  EXPECT_EQ(x.u, y.u) << "snapshots differ";
  EXPECT_EQ(x.step, y.step);
  EXPECT_EQ(x.time, y.time);
  EXPECT_EQ(x.diag_step, y.diag_step);
  EXPECT_EQ(x.diag, y.diag) << "diagnostics differ";
  EXPECT_EQ(y.finished, 1);
}

TEST(Heat2dRestart, StoppedBySigtermAndRestartedEndsBitIdenticalDirichlet) {
  check_restart(Boundary::Dirichlet, "sine", 9, SIGTERM);
}

TEST(Heat2dRestart, StoppedBySigusr1AndRestartedEndsBitIdenticalPeriodic) {
  check_restart(Boundary::Periodic, "gaussian", 12, SIGUSR1);
}

TEST(Heat2dRestart, WithTheDistributedLineSolveEndsBitIdentical) {
  check_restart(Boundary::Dirichlet, "sine", 9, SIGTERM, LineSolve::Distributed);
  check_restart(Boundary::Periodic, "gaussian", 12, SIGUSR1, LineSolve::Distributed);
}

// A run killed without warning restarts from its last periodic checkpoint; its output then
// starts at the checkpoint, and the fields still end bit for bit as the uninterrupted run's.
TEST(Heat2dRestart, FromAPeriodicCheckpoint) {
  heat2d_test::TempDir dir;
  RunSettings whole = base_settings("", Boundary::Dirichlet, "gaussian");
  whole.keep_final_field = true;
  const RunResult a = run(whole, MPI_COMM_WORLD);

  RunSettings first = base_settings(dir.file("p.h5"), Boundary::Dirichlet, "gaussian");
  first.checkpoint_every = 5;
  first.steps = 17; // "killed" after step 17: the last checkpoint is at 15
  run(first, MPI_COMM_WORLD);
  const io::H5File ck = io::H5File::open_read(dir.file("p.ckpt.h5"), MPI_COMM_WORLD);
  EXPECT_EQ(io::read_int_attribute(ck, "/", "step").value_or(-1), 15);

  RunSettings second = base_settings(dir.file("q.h5"), Boundary::Dirichlet, "gaussian");
  second.restart_file = dir.file("p.ckpt.h5");
  second.keep_final_field = true;
  const RunResult c = run(second, MPI_COMM_WORLD);
  EXPECT_EQ(c.start_step, 15);
  ASSERT_EQ(c.final_field_x, a.final_field_x);
  const OutputContents y = read_output(dir.file("q.h5"), false);
  EXPECT_EQ(y.step, (std::vector<std::int64_t>{15, 16, 20, 23}));
}

// What `tessera run` does: the handlers stay until the process ends, so a signal that comes after
// the last step (Slurm's time-limit warning racing the end of the run) leaves a finished run
// finished, with no checkpoint, instead of killing the process.
TEST(Heat2dRestart, ASignalAfterTheLastStepLeavesTheRunFinished) {
  struct sigaction old_term {
  }, old_usr1{};
  sigaction(SIGTERM, nullptr, &old_term);
  sigaction(SIGUSR1, nullptr, &old_usr1);
  heat2d_test::TempDir dir;
  RunSettings s = base_settings(dir.file("late.h5"), Boundary::Periodic, "gaussian");
  StopSignals::catch_until_exit();
  const RunResult r = run(s, MPI_COMM_WORLD);
  EXPECT_FALSE(r.interrupted);
  if (rank_of() == 0)
    std::raise(SIGUSR1); // with the default action this would end the test process
  EXPECT_EQ(StopSignals::pending(), rank_of() == 0 ? SIGUSR1 : 0);
  StopSignals::clear();
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGUSR1, &old_usr1, nullptr);
  MPI_Barrier(MPI_COMM_WORLD);
  const OutputContents c = read_output(s.output_file, false);
  EXPECT_EQ(c.finished, 1);
  EXPECT_EQ(c.steps_done, s.steps);
  EXPECT_FALSE(std::filesystem::exists(dir.file("late.ckpt.h5")));
}

// A stop signal that came during the set-up (before run() reaches its first step) stops the run
// there, with a checkpoint of the state it starts from, fresh or restarted; continuing from it
// ends bit for bit where the uninterrupted run ends.
TEST(Heat2dRestart, ASignalBeforeTheFirstStepStopsThereWithACheckpoint) {
  heat2d_test::TempDir dir;
  const unsigned seed = heat2d_test::shared_seed();
  const int signal_rank = static_cast<int>(seed % static_cast<unsigned>(size_of()));
  RunSettings whole = base_settings("", Boundary::Dirichlet, "sine");
  whole.keep_final_field = true;
  const RunResult a = run(whole, MPI_COMM_WORLD);

  RunSettings first = base_settings(dir.file("early.h5"), Boundary::Dirichlet, "sine");
  if (rank_of() == signal_rank)
    StopSignals::request(SIGTERM); // what the handler does when the signal arrives
  const RunResult stopped = run(first, MPI_COMM_WORLD);
  ASSERT_TRUE(stopped.interrupted) << "seed " << seed;
  EXPECT_EQ(stopped.signal, SIGTERM);
  EXPECT_EQ(stopped.start_step, 0);
  EXPECT_EQ(stopped.steps_done, 0) << "the run took a step after the signal";
  EXPECT_EQ(stopped.checkpoint, dir.file("early.ckpt.h5"));
  EXPECT_EQ(StopSignals::pending(), 0);
  {
    const io::H5File ck = io::H5File::open_read(stopped.checkpoint, MPI_COMM_WORLD);
    EXPECT_EQ(io::read_int_attribute(ck, "/", "step").value_or(-1), 0);
  }
  EXPECT_EQ(read_output(dir.file("early.h5"), true).finished, 0);

  // Restarted and stopped again before its first step: the checkpoint is rewritten at step 0.
  RunSettings second = base_settings(dir.file("early.h5"), Boundary::Dirichlet, "sine");
  second.restart_file = stopped.checkpoint;
  if (rank_of() == signal_rank)
    StopSignals::request(SIGUSR1);
  const RunResult again = run(second, MPI_COMM_WORLD);
  EXPECT_TRUE(again.interrupted);
  EXPECT_EQ(again.steps_done, 0);
  EXPECT_EQ(again.checkpoint, stopped.checkpoint);

  second.keep_final_field = true;
  const RunResult c = run(second, MPI_COMM_WORLD);
  EXPECT_FALSE(c.interrupted);
  EXPECT_EQ(c.steps_done, whole.steps);
  ASSERT_EQ(c.final_field_x, a.final_field_x) << "seed " << seed;
  EXPECT_EQ(read_output(dir.file("early.h5"), true).finished, 1);
}

// A NaN in the initial field stops the run at step 0 on every rank, before any file is written.
TEST(Heat2dRun, ANanInTheInitialFieldStopsAtStepZero) {
  heat2d_test::TempDir dir;
  const unsigned seed = heat2d_test::shared_seed();
  const std::int64_t nx = 19, ny = 14;
  auto u0 = heat2d_test::random_field(nx, ny, seed);
  u0[seed % u0.size()] = std::nan("");
  {
    const tessera::BlockDistribution d({ny, nx}, size_of());
    io::H5File f = io::H5File::create(dir.file("nan.h5"), MPI_COMM_WORLD);
    io::write_rows(f, "/u0", d, rank_of(), tessera::DType::f64,
                   u0.data() + d.begin(rank_of()) * nx);
    f.commit();
  }
  RunSettings s =
      base_settings(dir.file("out.h5"), Boundary::Periodic, (dir.file("nan.h5") + ":/u0").c_str());
  try {
    run(s, MPI_COMM_WORLD);
    ADD_FAILURE() << "a NaN in the initial field was not noticed (seed " << seed << ")";
  } catch (const tessera::NumericalError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("the initial field (step 0"), std::string::npos) << m;
    EXPECT_NE(m.find("is not finite (total nan"), std::string::npos) << m;
    EXPECT_TRUE(e.collective()) << m;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.h5")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.h5.partial")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.ckpt.h5")));
}

// A field that stops being finite during the run is noticed at the next diagnostics step or
// checkpoint, whichever comes first; the error names that step, and the last checkpoint (of a
// checked, finite state) is not overwritten.
TEST(Heat2dRun, ANanMidRunStopsNamingTheStepAndKeepsTheLastCheckpoint) {
  const unsigned seed = heat2d_test::shared_seed();
  const int spoil_rank = static_cast<int>(seed % static_cast<unsigned>(size_of()));
  struct Case {
    std::int64_t diagnostics_every, noticed;
  };
  // NaN after step 7; checkpoints every 5 (the one at 5 is kept).
  for (const Case k : {Case{0, 10}, Case{3, 9}}) {
    SCOPED_TRACE(k.diagnostics_every);
    heat2d_test::TempDir dir;
    RunSettings s = base_settings(dir.file("p.h5"), Boundary::Dirichlet, "gaussian");
    s.diagnostics_every = k.diagnostics_every;
    s.checkpoint_every = 5;
    s.after_step = [&](std::int64_t n, Solver& solver) {
      if (n == 7 && rank_of() == spoil_rank) {
        const auto u = solver.mutable_field_y();
        u[seed % u.size()] = std::nan("");
      }
    };
    try {
      run(s, MPI_COMM_WORLD);
      ADD_FAILURE() << "a NaN in the field was not noticed (seed " << seed << ")";
    } catch (const tessera::NumericalError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(fmt::format("the field at step {} (finite at step", k.noticed)),
                std::string::npos)
          << m;
      EXPECT_NE(m.find(fmt::format("the last checkpoint, '{}' (step 5)", dir.file("p.ckpt.h5"))),
                std::string::npos)
          << m;
      EXPECT_TRUE(e.collective()) << m;
    }
    EXPECT_FALSE(std::filesystem::exists(dir.file("p.h5")));
    EXPECT_FALSE(std::filesystem::exists(dir.file("p.h5.partial")));
    const io::H5File ck = io::H5File::open_read(dir.file("p.ckpt.h5"), MPI_COMM_WORLD);
    EXPECT_EQ(io::read_int_attribute(ck, "/", "step").value_or(-1), 5);
    std::vector<double> u(19 * 14);
    h5::read(ck, "/fields/u", h5::Elem::f64, {{0, 0}, {14, 19}}, u.data());
    for (const double v : u)
      ASSERT_TRUE(std::isfinite(v)) << "the kept checkpoint holds " << v;
  }
}

TEST(Heat2dRestart, RefusesACheckpointOfAnotherProblem) {
  heat2d_test::TempDir dir;
  RunSettings first = base_settings(dir.file("a.h5"), Boundary::Dirichlet, "sine");
  first.checkpoint_every = 5;
  first.steps = 6;
  run(first, MPI_COMM_WORLD);
  RunSettings second = base_settings(dir.file("b.h5"), Boundary::Dirichlet, "sine");
  second.restart_file = dir.file("a.ckpt.h5");
  second.config.dt *= 2;
  try {
    run(second, MPI_COMM_WORLD);
    ADD_FAILURE() << "a checkpoint with another time step was accepted";
  } catch (const tessera::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("time.dt"), std::string::npos) << e.what();
  }
  second = base_settings(dir.file("b.h5"), Boundary::Dirichlet, "sine");
  second.restart_file = dir.file("missing.ckpt.h5");
  EXPECT_THROW(run(second, MPI_COMM_WORLD), tessera::Error);
  EXPECT_FALSE(std::filesystem::exists(dir.file("b.h5")));
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) // temporary, lock
    EXPECT_FALSE(e.path().filename().string().starts_with("b.h5.")) << e.path();
}

TEST(Heat2dRun, RejectsBadSettingsOnEveryRankNamingTheKey) {
  const int p = size_of();
  auto rejects = [&](const RunSettings& s, const std::string& key) {
    try {
      run(s, MPI_COMM_WORLD);
      ADD_FAILURE() << "expected an error naming " << key;
    } catch (const tessera::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      EXPECT_TRUE(e.collective()) << e.what();
    }
  };
  RunSettings ok;
  ok.config.nx = ok.config.ny = 8;
  ok.config.dt = 1e-3;
  ok.steps = 1;
  ok.handle_signals = false;
  RunSettings s = ok;
  s.config.nx = 0;
  rejects(s, "grid.nx");
  s = ok;
  s.config.ny = -3;
  rejects(s, "grid.ny");
  s = ok;
  s.config.dt = 0.0;
  rejects(s, "time.dt");
  s = ok;
  s.config.lx = -1.0;
  rejects(s, "grid.lx");
  s = ok;
  s.config.alpha = std::nan("");
  rejects(s, "physics.alpha");
  s = ok;
  s.config.alpha = 0.0;
  rejects(s, "physics.alpha");
  s = ok;
  s.config.lx = 1e-300; // the spacing's square underflows: the line systems would be singular
  rejects(s, "grid.lx");
  s = ok;
  s.config.ly = 1e308; // the spacing's square overflows (and the coordinates)
  rejects(s, "grid.ly");
  s = ok;
  s.steps = -1;
  rejects(s, "time.steps");
  s = ok;
  s.snapshot_every = -2;
  rejects(s, "output.snapshot_every");
  if (p > 1) {
    s = ok;
    s.config.ny = p - 1;
    rejects(s, "grid.ny");
    s = ok;
    s.config.nx = p - 1;
    rejects(s, "grid.nx");
  }
}

TEST(Heat2dOutput, UnwritableOutputFailsOnEveryRank) {
  RunSettings s = base_settings("/nonexistent-dir/x/out.h5", Boundary::Dirichlet, "sine");
  EXPECT_THROW(run(s, MPI_COMM_WORLD), tessera::IoError);
}

} // namespace
