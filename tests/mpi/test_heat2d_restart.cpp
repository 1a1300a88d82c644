// Heat2d runs stopped and restarted: a run stopped by a signal on one rank and restarted from
// its checkpoint ends bit for bit where the uninterrupted run ends (snapshots and diagnostics
// included), also from a periodic checkpoint; a signal before the first step or after the last;
// a checkpoint of another problem refused.
#include <gtest/gtest.h>
#include <mpi.h>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_file.hpp"
#include "solver/run.hpp"
#include "solver/solver.hpp"
#include "solver/stop_signal.hpp"
#include "test_heat2d_run_support.hpp"

namespace {

using namespace tessera::heat2d;
using namespace heat2d_test;
namespace io = tessera::io;

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

// A finished run leaves a checkpoint of its last step; restarted from it with more steps, it
// writes the output of one longer run, the first run's snapshots carried over.
TEST(Heat2dRestart, ExtendingAFinishedRunGivesTheLongerRun) {
  heat2d_test::TempDir dir;
  RunSettings whole = base_settings(dir.file("whole.h5"), Boundary::Periodic, "gaussian");
  run(whole, MPI_COMM_WORLD);

  RunSettings first = base_settings(dir.file("ext.h5"), Boundary::Periodic, "gaussian");
  first.steps = 12; // a snapshot and a diagnostics step of the longer run (every 4 and 3)
  const RunResult r1 = run(first, MPI_COMM_WORLD);
  EXPECT_FALSE(r1.interrupted);
  EXPECT_EQ(r1.checkpoint, dir.file("ext.ckpt.h5"));
  RunSettings second = base_settings(dir.file("ext.h5"), Boundary::Periodic, "gaussian");
  second.restart_file = r1.checkpoint;
  const RunResult r2 = run(second, MPI_COMM_WORLD);
  EXPECT_EQ(r2.start_step, first.steps);
  EXPECT_EQ(r2.run_id, r1.run_id);

  const OutputContents x = read_output(dir.file("whole.h5"), false);
  const OutputContents y = read_output(dir.file("ext.h5"), false);
  EXPECT_EQ(x.step, y.step) << "the first run's snapshots were not carried over";
  EXPECT_EQ(x.u, y.u);
  EXPECT_EQ(x.diag, y.diag);
  EXPECT_EQ(y.finished, 1);
}

// A run killed without warning restarts from its last periodic checkpoint; its output then
// starts at the checkpoint, and the fields still end bit for bit as the uninterrupted run's. The
// periodic checkpoints are numbered (checkpoint_keep): the one at step 15 stays beside the one
// of the last step, 17, which p.ckpt.h5 names.
TEST(Heat2dRestart, FromAPeriodicCheckpoint) {
  heat2d_test::TempDir dir;
  RunSettings whole = base_settings("", Boundary::Dirichlet, "gaussian");
  whole.keep_final_field = true;
  const RunResult a = run(whole, MPI_COMM_WORLD);

  RunSettings first = base_settings(dir.file("p.h5"), Boundary::Dirichlet, "gaussian");
  first.checkpoint_every = 5;
  first.checkpoint_keep = 2;
  first.steps = 17; // "killed" after step 17: the last periodic checkpoint is at 15
  run(first, MPI_COMM_WORLD);
  {
    const io::H5File ck = io::H5File::open_read(dir.file("p.ckpt.000015.h5"), MPI_COMM_WORLD);
    EXPECT_EQ(io::read_int_attribute(ck, "/", "step").value_or(-1), 15);
    const io::H5File last = io::H5File::open_read(dir.file("p.ckpt.h5"), MPI_COMM_WORLD);
    EXPECT_EQ(io::read_int_attribute(last, "/", "step").value_or(-1), 17);
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("p.ckpt.000010.h5"))) << "keep = 2: removed";
  EXPECT_TRUE(std::filesystem::exists(dir.file("p.ckpt.000017.h5")));

  RunSettings second = base_settings(dir.file("q.h5"), Boundary::Dirichlet, "gaussian");
  second.restart_file = dir.file("p.ckpt.000015.h5");
  second.keep_final_field = true;
  const RunResult c = run(second, MPI_COMM_WORLD);
  EXPECT_EQ(c.start_step, 15);
  ASSERT_EQ(c.final_field_x, a.final_field_x);
  const OutputContents y = read_output(dir.file("q.h5"), false);
  EXPECT_EQ(y.step, (std::vector<std::int64_t>{15, 16, 20, 23}));
}

// What `tessera run` does: the handlers stay until the process ends, so a signal that comes after
// the last step (Slurm's time-limit warning racing the end of the run) leaves a finished run
// finished, with only the checkpoint of its last step, instead of killing the process.
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
  EXPECT_EQ(r.checkpoint, dir.file("late.ckpt.h5"));
  const io::H5File ck = io::H5File::open_read(dir.file("late.ckpt.h5"), MPI_COMM_WORLD);
  EXPECT_EQ(io::read_int_attribute(ck, "/", "step").value_or(-1), s.steps);
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

} // namespace
