// Signal handlers that ask a run to stop, and the cross-rank agreement on it.
#include "solver/stop_signal.hpp"

#include <pthread.h>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "mpi/communicator.hpp"
#include "mpi/reduce_plan.hpp"

namespace tessera::heat2d {

namespace {

volatile std::sig_atomic_t g_pending = 0;

extern "C" void on_stop_signal(int signal) {
  g_pending = signal;
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

void StopSignals::release_to_default() {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
  if (const int signal = g_pending) {
    g_pending = 0;
    std::raise(signal);
  }
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
