// The I/O thread: start-up checks (MPI thread level, CPU pinning), the FIFO request loop and a
// shutdown that never waits on requests that have not started.
#include "io/io_thread.hpp"

#include <pthread.h>
#include <sched.h>

#include <cerrno>
#include <cstring>

#include "core/log.hpp"
#include "core/throw.hpp"
#include "mpi/environment.hpp"

namespace tessera::io {

const char* mpi_thread_level_name(int level) noexcept {
  switch (level) {
  case MPI_THREAD_SINGLE:
    return "MPI_THREAD_SINGLE";
  case MPI_THREAD_FUNNELED:
    return "MPI_THREAD_FUNNELED";
  case MPI_THREAD_SERIALIZED:
    return "MPI_THREAD_SERIALIZED";
  case MPI_THREAD_MULTIPLE:
    return "MPI_THREAD_MULTIPLE";
  default:
    return "an unknown MPI thread level";
  }
}

namespace {

// The I/O thread calls MPI (MPI-IO under HDF5, agreements) while compute calls MPI too.
void require_thread_multiple() {
  TESSERA_REQUIRE(mpi::initialized(), MpiError,
                  "the I/O thread needs MPI, but MPI is not initialised: call "
                  "MPI_Init_thread(…, MPI_THREAD_MULTIPLE, …) first");
  const int provided = mpi::thread_level();
  TESSERA_REQUIRE(provided >= MPI_THREAD_MULTIPLE, MpiError,
                  "the I/O thread needs MPI_THREAD_MULTIPLE, but MPI provides only {}: initialise "
                  "MPI with MPI_Init_thread(…, MPI_THREAD_MULTIPLE, …), and use an MPI library "
                  "built with thread support (OpenMPI: --enable-mpi-thread-multiple)",
                  mpi_thread_level_name(provided));
}

// Checked before the thread starts so the error names what is wrong with the option.
void check_io_cpu(int cpu) {
  if (cpu < 0)
    return;
  TESSERA_REQUIRE(cpu < CPU_SETSIZE, InputError, "io_cpu = {} is not a CPU number (0 … {})", cpu,
                  CPU_SETSIZE - 1);
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && !CPU_ISSET(cpu, &allowed))
    TESSERA_THROW(InputError,
                  "io_cpu = {}: this process may not run on CPU {} (it may use {} CPUs; see "
                  "`taskset -p`, or the launcher's binding options)",
                  cpu, cpu, CPU_COUNT(&allowed));
}

void name_and_pin_this_thread(const IoThreadOptions& o) {
  const std::string name = o.name.substr(0, 15); // Linux limit: 16 bytes with the NUL
  // A name is a convenience for tools: failing to set one is not worth stopping for.
  pthread_setname_np(pthread_self(), name.c_str());
  if (o.io_cpu < 0)
    return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(o.io_cpu, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0)
    TESSERA_THROW(ResourceError, "cannot pin the I/O thread to CPU {}: {}", o.io_cpu,
                  std::strerror(rc));
}

std::exception_ptr make_error(const char* what) {
  try {
    TESSERA_THROW(InternalError, "{}", what);
  } catch (...) {
    return std::current_exception();
  }
}

} // namespace

IoThread::IoThread(MPI_Comm comm, IoThreadOptions options) : options_(std::move(options)) {
  if (comm != MPI_COMM_NULL) {
    require_thread_multiple(); // the same answer on every rank: no rank is left in the dup
    // Duplicated here, on the calling thread, in the caller's order of collective calls.
    comm_ = std::make_unique<mpi::Communicator>(comm);
  }
  // After the last collective call: a failure from here on is local to this rank, so callers
  // can agree on it (mpi::collectively) without leaving other ranks in the dup.
  check_io_cpu(options_.io_cpu);
  std::promise<void> started;
  auto ready = started.get_future();
  // The promise moves into the thread: it must outlive set_value(), which may still be running
  // when the constructor wakes up.
  thread_ = std::thread([this, p = std::move(started)]() mutable { loop(p); });
  try {
    ready.get(); // rethrows a pinning failure
  } catch (...) {
    stop_and_join();
    throw;
  }
}

IoThread::~IoThread() {
  cancel(make_error("the I/O thread was shut down before this request ran"));
  stop_and_join();
}

void IoThread::enqueue(std::unique_ptr<Request> r) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_)
      TESSERA_THROW(InternalError, "a request was submitted to an I/O thread that was stopped");
    requests_.push_back(std::move(r));
  }
  wake_.notify_one();
}

void IoThread::loop(std::promise<void>& started) {
  try {
    name_and_pin_this_thread(options_);
  } catch (...) {
    started.set_exception(std::current_exception());
    return;
  }
  started.set_value();
  for (;;) {
    std::unique_ptr<Request> r;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !requests_.empty(); });
      if (requests_.empty())
        return; // stopping and drained
      r = std::move(requests_.front());
      requests_.pop_front();
    }
    r->run();
  }
}

void IoThread::finish() {
  TESSERA_REQUIRE(!on_io_thread(), InternalError, "an I/O thread request called finish()");
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  stop_and_join();
}

void IoThread::cancel(std::exception_ptr error) noexcept {
  if (!error)
    error = make_error("the I/O thread's requests were cancelled without an error");
  std::deque<std::unique_ptr<Request>> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(requests_);
  }
  wake_.notify_all();
  for (auto& r : dropped)
    r->fail(error);
}

void IoThread::stop_and_join() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (!thread_.joinable())
    return;
  if (on_io_thread()) {
    log::error("an I/O thread request destroyed its own thread; detaching it");
    thread_.detach();
    return;
  }
  thread_.join();
}

} // namespace tessera::io
