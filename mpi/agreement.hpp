// Collective error agreement: before a step that can fail on one rank only (opening a file,
// allocating, validating input), every rank says whether it succeeded; if any failed, all of
// them throw the same error (the lowest failing rank's message), so nobody waits forever in a
// collective that the failed rank will never enter.
#pragma once

#include <mpi.h>

#include <exception>
#include <functional>

namespace tessera::mpi {

// Runs `step` on every rank. If it throws on any rank, every rank throws: the failing ranks
// rethrow their own exception, the others an error of the same kind carrying the message of
// the lowest failing rank ("rank R: …").
void collectively(MPI_Comm comm, const std::function<void()>& step);

// Lower-level: `error` is null when this rank succeeded. Throws on every rank if any failed.
void agree(MPI_Comm comm, std::exception_ptr error);

// collectively() for a step that is itself a collective call which can fail on some ranks only
// and leave the others inside it, where they would never reach the agreement: a rank whose
// step failed waits at most `seconds` for the others to agree, then runs `before_abort` and
// aborts the job with its message (abort_job). Ranks whose step succeeded wait as long as it
// takes (the failed one ends the job if they are stuck).
void collectively_or_abort(MPI_Comm comm, double seconds, const std::function<void()>& step,
                           const std::function<void()>& before_abort = {});

// For failures that cannot be agreed on (inside a collective, in a thread): print the message
// and MPI_Abort the whole job.
[[noreturn]] void abort_job(MPI_Comm comm, const char* message, int code = 1) noexcept;
// abort_job for a failure this rank has already reported: ends the whole job with `code`
// (MPI_Abort; std::_Exit when MPI is not running).
[[noreturn]] void abort_reported(MPI_Comm comm, int code = 1) noexcept;

} // namespace tessera::mpi
