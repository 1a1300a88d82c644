// Stopping a run cleanly on a signal: SIGTERM (what Slurm and most schedulers send before a
// kill) and SIGUSR1 (what `sbatch --signal=USR1@60` sends ahead of a time limit; mpirun passes
// it on to every rank). The handler only sets a flag; the solver checks it before its first step
// and once per step after, and the ranks agree on it (StopAgreement), so all of them write the
// checkpoint at the same step even when the signal reached only some.
#pragma once

#include <mpi.h>

#include <csignal>
#include <memory>

namespace tessera {
class ReducePlan;
}

namespace tessera::heat2d {

// Installs the handlers for its lifetime and restores the previous ones afterwards.
class StopSignals {
public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Catches both signals from now until the process ends (nothing is restored), and unblocks
  // them where whoever started the process left them blocked (they would never arrive). A
  // program calls it as early as it can (tessera's main: before MPI starts): a signal during
  // the set-up is then kept, and run() stops before its first step; one that arrives after the
  // last step, while the output is closed and MPI shuts down, only sets the flag instead of
  // killing a run that has finished.
  static void catch_until_exit();
  // For the parts of a program that do not stop cleanly (tessera's commands other than a heat2d
  // run): from now on SIGTERM, SIGUSR1 and SIGINT end the process at once — it removes the
  // files it was writing (the temporaries and locks of core/signal_removals.hpp), prints
  // `tessera: stopped by SIGTERM` when `report`, and exits with status 128 + the signal's
  // number, as a shell reports a process killed by it. At once, because a rank may be inside a
  // collective call that waits for others, and `mpirun` kills the ranks a second after passing
  // a signal on. A signal that came already ends the process the same way now.
  static void end_at_signal(bool report);
  // For when the command has ended and said how: a signal from now on still ends the process,
  // without a line of its own (mpirun sends SIGTERM to every rank once one has exited with an
  // error, which rank 0 has reported already).
  static void stop_reporting() noexcept;

  // The signal that asked this process to stop, 0 when none did.
  static int pending() noexcept;
  // What the handler does (also for tests and embedding programs).
  static void request(int signal) noexcept;
  static void clear() noexcept;

private:
  struct sigaction old_term_ {
  }, old_usr1_{};
};

// "Did a stop signal reach any rank?" — one small allreduce per call, through the reduction
// plans so that every MPI call stays in mpi/.
class StopAgreement {
public:
  explicit StopAgreement(MPI_Comm comm); // collective
  ~StopAgreement();
  // Collective: the largest signal number pending on any rank, 0 when none.
  int any(int mine);

private:
  std::unique_ptr<ReducePlan> plan_;
};

// "SIGTERM", "SIGUSR1", "SIGINT", "a signal".
const char* signal_name(int signal) noexcept;

} // namespace tessera::heat2d
