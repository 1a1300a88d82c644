// IoThread: the one thread per rank that makes every HDF5 call (Debian's HDF5 1.10 is not
// thread-safe).
//
//   IoThread io(comm, {.io_cpu = 3});                     // collective: duplicates comm
//   auto f = io.submit([&] { return read_something(io.comm()); });
//   … compute …
//   auto v = f.get();                                      // the result, or the I/O error
//
// Requests run one at a time in the order they were submitted, so the collective HDF5 calls
// inside them happen in the same order on every rank as long as every rank submits the same
// sequence. They run on the thread's own duplicate of the caller's communicator, so their
// messages never match the compute side's. The thread is named "tessera-io" (top -H, gdb,
// perf) and can be pinned to one CPU, away from the OpenMP threads.
//
// Errors: an exception thrown by a request is delivered through its future. cancel(e) fails
// every request that has not started with e. Shutdown never waits on requests that have not
// started; it waits for the running one, so a request that blocks on a StagingQueue must be
// woken (abort the queue) before the IoThread is destroyed — see out_of_core_pipeline.hpp.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "mpi/communicator.hpp"

namespace tessera::io {

struct IoThreadOptions {
  int io_cpu = -1;                 // pin the thread to this CPU (as numbered by the OS); -1: don't
  std::string name = "tessera-io"; // thread name; Linux keeps the first 15 characters
};

class IoThread {
public:
  // Collective over `comm`: duplicates it on the calling thread. Throws MpiError unless MPI was
  // initialised with MPI_THREAD_MULTIPLE (the I/O thread and compute both call MPI), and
  // InputError / ResourceError when the thread cannot be pinned to options.io_cpu — after the
  // duplication, so wrapping the construction in mpi::collectively() is safe.
  // MPI_COMM_NULL gives a thread without a communicator that needs no MPI at all (serial
  // tools and tests); comm() then returns MPI_COMM_NULL.
  explicit IoThread(MPI_Comm comm, IoThreadOptions options = {});
  // Cancels the requests that have not started, waits for the running one and joins.
  ~IoThread();
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  // Queues `f` (called with no arguments) behind every request submitted before it. The future
  // holds f's result or its exception. Throws InternalError after finish() or cancel().
  template <class F>
  auto submit(F&& f) -> std::future<std::invoke_result_t<std::decay_t<F>&>>;

  // Runs every request submitted so far, then stops the thread. Idempotent.
  void finish();
  // Every request that has not started fails with `error` (a null error becomes an
  // InternalError); the thread stops after the running one. Requests submitted later throw.
  void cancel(std::exception_ptr error) noexcept;

  // The thread's own communicator: use it, never the caller's, for collective calls inside
  // requests.
  MPI_Comm comm() const noexcept { return comm_ ? comm_->get() : MPI_COMM_NULL; }
  int rank() const noexcept { return comm_ ? comm_->rank() : 0; }
  int size() const noexcept { return comm_ ? comm_->size() : 1; }
  // True on the I/O thread itself (requests may assert it before touching HDF5).
  bool on_io_thread() const noexcept { return std::this_thread::get_id() == thread_.get_id(); }
  const IoThreadOptions& options() const noexcept { return options_; }

private:
  struct Request {
    virtual ~Request() = default;
    virtual void run() noexcept = 0;
    virtual void fail(std::exception_ptr e) noexcept = 0;
  };
  template <class F, class R>
  struct Task final : Request {
    explicit Task(F fn) : f(std::move(fn)) {}
    void run() noexcept override {
      try {
        if constexpr (std::is_void_v<R>) {
          f();
          promise.set_value();
        } else {
          promise.set_value(f());
        }
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
    }
    void fail(std::exception_ptr e) noexcept override { promise.set_exception(std::move(e)); }
    F f;
    std::promise<R> promise;
  };

  void enqueue(std::unique_ptr<Request> r);
  void loop(std::promise<void>& started);
  void stop_and_join() noexcept;

  IoThreadOptions options_;
  std::unique_ptr<mpi::Communicator> comm_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Request>> requests_;
  bool stopping_ = false; // no more submissions; the loop ends once requests_ is empty
  std::thread thread_;
};

template <class F>
auto IoThread::submit(F&& f) -> std::future<std::invoke_result_t<std::decay_t<F>&>> {
  using R = std::invoke_result_t<std::decay_t<F>&>;
  auto task = std::make_unique<Task<std::decay_t<F>, R>>(std::forward<F>(f));
  auto future = task->promise.get_future();
  enqueue(std::move(task));
  return future;
}

// The MPI thread level as text ("MPI_THREAD_SERIALIZED"), for messages.
const char* mpi_thread_level_name(int level) noexcept;

} // namespace tessera::io
