// Collective error agreement: an allreduce finds the lowest failing rank, a broadcast carries
// its error's kind and message, and every rank throws an error of that kind, marked collective.
#include "mpi/agreement.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>

#include "core/check.hpp"
#include "core/throw.hpp"

namespace tessera::mpi {

namespace {

// Error kinds as they travel between ranks. Order matters only within one job.
enum class Kind : int { Error, Input, Io, Mpi, Cuda, NotCompiled, Resource, Numerical, Internal };

struct Described {
  Kind kind = Kind::Error;
  std::string message;
};

// What the failing rank says about its exception.
Described describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const InputError& e) {
    return {Kind::Input, e.what()};
  } catch (const IoError& e) {
    return {Kind::Io, e.what()};
  } catch (const MpiError& e) {
    return {Kind::Mpi, e.what()};
  } catch (const CudaError& e) {
    return {Kind::Cuda, e.what()};
  } catch (const NotCompiled& e) {
    return {Kind::NotCompiled, e.what()};
  } catch (const ResourceError& e) {
    return {Kind::Resource, e.what()};
  } catch (const NumericalError& e) {
    return {Kind::Numerical, e.what()};
  } catch (const InternalError& e) {
    return {Kind::Internal, e.what()};
  } catch (const Error& e) {
    return {Kind::Error, e.what()};
  } catch (const std::bad_alloc& e) {
    return {Kind::Resource, std::string("out of memory (") + e.what() + ")"};
  } catch (const std::exception& e) {
    return {Kind::Error, e.what()};
  } catch (...) {
    return {Kind::Error, "unknown exception"};
  }
}

template <class E>
[[noreturn]] void throw_marked(const std::string& message, const char* file, int line) {
  E e(message, file, line);
  e.mark_collective();
  throw e;
}

[[noreturn]] void throw_kind(Kind kind, const std::string& message, const char* file, int line) {
  switch (kind) {
  case Kind::Input:
    throw_marked<InputError>(message, file, line);
  case Kind::Io:
    throw_marked<IoError>(message, file, line);
  case Kind::Mpi:
    throw_marked<MpiError>(message, file, line);
  case Kind::Cuda:
    throw_marked<CudaError>(message, file, line);
  case Kind::NotCompiled:
    throw_marked<NotCompiled>(message, file, line);
  case Kind::Resource:
    throw_marked<ResourceError>(message, file, line);
  case Kind::Numerical:
    throw_marked<NumericalError>(message, file, line);
  case Kind::Internal:
    throw_marked<InternalError>(message, file, line);
  case Kind::Error:
    break;
  }
  throw_marked<Error>(message, file, line);
}

// A failing rank rethrows its own exception, marked collective. Exceptions that are not
// tessera errors cannot carry the mark, so they become the tessera error of the same kind.
[[noreturn]] void rethrow_own(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (Error& e) {
    e.mark_collective();
    throw;
  } catch (...) {
    const Described d = describe(error);
    throw_kind(d.kind, d.message, __FILE__, __LINE__);
  }
}

// The second half of an agreement: `first` is the lowest failing rank (INT_MAX: none).
void settle(MPI_Comm comm, int rank, int first, const std::exception_ptr& error) {
  if (first == INT_MAX)
    return;

  // The lowest failing rank tells the others what went wrong: kind and length, then the text.
  Described d;
  if (rank == first)
    d = describe(error);
  long long header[2] = {static_cast<long long>(d.kind), static_cast<long long>(d.message.size())};
  CHECK_MPI(MPI_Bcast(header, 2, MPI_LONG_LONG, first, comm));
  d.kind = static_cast<Kind>(header[0]);
  d.message.resize(static_cast<std::size_t>(header[1]));
  if (header[1] > 0)
    CHECK_MPI(MPI_Bcast(d.message.data(), static_cast<int>(header[1]), MPI_CHAR, first, comm));

  if (error)
    rethrow_own(error);
  throw_kind(d.kind, "rank " + std::to_string(first) + ": " + d.message, __FILE__, __LINE__);
}

} // namespace

void agree(MPI_Comm comm, std::exception_ptr error) {
  int rank = 0, size = 1;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));
  if (size == 1) {
    if (error)
      rethrow_own(error);
    return;
  }
  int mine = error ? rank : INT_MAX;
  int first = INT_MAX;
  CHECK_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  settle(comm, rank, first, error);
}

void collectively_or_abort(MPI_Comm comm, double seconds, const std::function<void()>& step,
                           const std::function<void()>& before_abort) {
  std::exception_ptr error;
  try {
    step();
  } catch (...) {
    error = std::current_exception();
  }
  int rank = 0, size = 1;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));
  if (size == 1) {
    agree(comm, error);
    return;
  }
  // Nonblocking on every rank: a blocking allreduce would not match a nonblocking one.
  int mine = error ? rank : INT_MAX;
  int first = INT_MAX;
  MPI_Request request = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm, &request));
  if (!error) {
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    settle(comm, rank, first, error);
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  auto pause = std::chrono::microseconds(100);
  for (;;) {
    int done = 0;
    CHECK_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done)
      break;
    if (std::chrono::steady_clock::now() >= deadline) {
      const std::string message =
          describe(error).message + fmt::format(" (the other ranks did not come to agree on "
                                                "it within {:g} s: aborting the job)",
                                                seconds);
      if (before_abort) {
        try {
          before_abort();
        } catch (...) {
        }
      }
      abort_job(comm, message.c_str());
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(10000));
  }
  settle(comm, rank, first, error);
}

void collectively(MPI_Comm comm, const std::function<void()>& step) {
  std::exception_ptr error;
  try {
    step();
  } catch (...) {
    error = std::current_exception();
  }
  agree(comm, error);
}

void abort_job(MPI_Comm comm, const char* message, int code) noexcept {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  int rank = 0;
  if (initialized && !finalized)
    MPI_Comm_rank(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, &rank);
  std::fprintf(stderr, "[rank %d] tessera: fatal: %s\n", rank, message ? message : "(no message)");
  abort_reported(comm, code);
}

void abort_reported(MPI_Comm comm, int code) noexcept {
  std::fflush(stderr);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized)
    MPI_Abort(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code);
  std::_Exit(code);
}

} // namespace tessera::mpi
