// Signal handlers that ask a run to stop, and the cross-rank agreement on it.
#include "solver/stop_signal.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cstring>

#include "core/check.hpp"
#include "core/signal_removals.hpp"
#include "core/throw.hpp"
#include "mpi/communicator.hpp"
#include "mpi/reduce_plan.hpp"

namespace tessera::heat2d {

namespace {

volatile std::sig_atomic_t g_pending = 0;

extern "C" void on_stop_signal(int signal) {
  g_pending = signal;
}

volatile std::sig_atomic_t g_report = 0;

void write_text(const char* text) noexcept {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0)
      return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

// Async-signal-safe only: unlink, write and _exit.
extern "C" void on_end_signal(int signal) {
  const int removed = signal_removals::remove_all();
  if (g_report) {
    write_text("tessera: stopped by ");
    write_text(signal_name(signal));
    write_text(removed > 0 ? "; the unfinished output was removed\n" : "\n");
  }
  ::_exit(128 + signal);
}

void install(int signal, struct sigaction* old) {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART; // file and MPI system calls carry on; the flag is read between steps
  if (sigaction(signal, &sa, old) != 0)
    TESSERA_THROW(InternalError, "cannot install a handler for {}", signal_name(signal));
}

} // namespace

StopSignals::StopSignals() {
  install(SIGTERM, &old_term_);
  install(SIGUSR1, &old_usr1_);
}

void StopSignals::catch_until_exit() {
  install(SIGTERM, nullptr);
  install(SIGUSR1, nullptr);
  sigset_t both;
  sigemptyset(&both);
  sigaddset(&both, SIGTERM);
  sigaddset(&both, SIGUSR1);
  pthread_sigmask(SIG_UNBLOCK, &both, nullptr);
}

void StopSignals::end_at_signal(bool report) {
  g_report = report ? 1 : 0;
  struct sigaction sa {};
  sa.sa_handler = on_end_signal;
  sigemptyset(&sa.sa_mask);
  for (const int signal : {SIGTERM, SIGUSR1, SIGINT})
    sigaddset(&sa.sa_mask, signal); // one at a time: the first one decides the exit status
  for (const int signal : {SIGTERM, SIGUSR1, SIGINT})
    if (sigaction(signal, &sa, nullptr) != 0)
      TESSERA_THROW(InternalError, "cannot install a handler for {}", signal_name(signal));
  if (const int signal = g_pending)
    on_end_signal(signal);
}

void StopSignals::stop_reporting() noexcept {
  g_report = 0;
}

StopSignals::~StopSignals() {
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGUSR1, &old_usr1_, nullptr);
}

int StopSignals::pending() noexcept {
  return g_pending;
}
void StopSignals::request(int signal) noexcept {
  g_pending = signal;
}
void StopSignals::clear() noexcept {
  g_pending = 0;
}

StopAgreement::StopAgreement(MPI_Comm comm) {
  // One value per rank: the rows of a P x 1 matrix, reduced with Max.
  const int p = mpi::comm_size(comm);
  plan_ = std::make_unique<ReducePlan>(BlockDistribution({p, 1}, p), DType::f64, comm, Backend::Cpu,
                                       std::vector<Op>{Op::Max}, Axis::All);
}

StopAgreement::~StopAgreement() = default;

int StopAgreement::any(int mine) {
  const double v = static_cast<double>(mine);
  return static_cast<int>(plan_->execute(&v).scalar(Op::Max));
}

const char* signal_name(int signal) noexcept {
  switch (signal) {
  case SIGTERM:
    return "SIGTERM";
  case SIGUSR1:
    return "SIGUSR1";
  case SIGINT:
    return "SIGINT";
  default:
    return "a signal";
  }
}

} // namespace tessera::heat2d
