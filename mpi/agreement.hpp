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

// For a step that is itself a collective call of another library (a collective H5Dread): a
// rank on which it fails may have left before that library's own communication, and the others
// then wait inside the step for it forever, never reaching the agreement. So a rank whose step
// failed waits at most `seconds` for the others; when they do not come, it aborts the job with
// its message (abort_job). Ranks whose step succeeded wait as long as the others need. The
// outcome is otherwise that of collectively(). Every rank must call this (not collectively())
// at the same point.
void collectively_within(MPI_Comm comm, double seconds, const std::function<void()>& step);

// For failures that cannot be agreed on (inside a collective, in a thread): print the message
// and MPI_Abort the whole job.
[[noreturn]] void abort_job(MPI_Comm comm, const char* message, int code = 1) noexcept;

} // namespace tessera::mpi
