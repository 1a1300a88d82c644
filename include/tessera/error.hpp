// Typed exceptions carrying the file and line where they were raised. Every error tessera
// reports is a tessera::Error (a std::runtime_error): catch that, or one of the kinds below.
// Inside tessera, TESSERA_THROW (core/throw.hpp) raises them.
#pragma once

#include <stdexcept>
#include <string>

#include <tessera/export.h>

namespace tessera {

class TESSERA_API Error : public std::runtime_error {
public:
  Error(const std::string& message, const char* file, int line)
      : std::runtime_error(message), file_(file), line_(line) {}
  const char* file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  // A short name of the error family, shown in front of the message ("input error: …").
  virtual const char* kind() const noexcept { return "error"; }
  // Set by mpi::agree(): every rank of the communicator raised this error together, so the
  // entry point may exit normally instead of aborting the job.
  bool collective() const noexcept { return collective_; }
  void mark_collective() noexcept { collective_ = true; }

private:
  const char* file_;
  int line_;
  bool collective_ = false;
};

#define TESSERA_DEFINE_ERROR(Name, label)                                                          \
  class TESSERA_API Name : public Error {                                                          \
  public:                                                                                          \
    using Error::Error;                                                                            \
    const char* kind() const noexcept override { return label; }                                   \
  }

// Bad user input: decks, command-line values, shapes, datasets that are not what was asked.
TESSERA_DEFINE_ERROR(InputError, "input error");
// The file system or HDF5 failed (missing file, unwritable directory, disk full, corrupt data).
TESSERA_DEFINE_ERROR(IoError, "I/O error");
// An MPI call failed, or another rank reported a failure during a collective step.
TESSERA_DEFINE_ERROR(MpiError, "MPI error");
// A CUDA, cuBLAS or NCCL call failed.
TESSERA_DEFINE_ERROR(CudaError, "CUDA error");
// The requested backend or feature was not compiled into this build.
TESSERA_DEFINE_ERROR(NotCompiled, "not available");
// Memory could not be allocated or a limit would be exceeded.
TESSERA_DEFINE_ERROR(ResourceError, "resource error");
// A computation produced a value it cannot continue from (a NaN or an infinity in a solver state).
TESSERA_DEFINE_ERROR(NumericalError, "numerical error");
// An internal invariant failed: a bug in tessera.
TESSERA_DEFINE_ERROR(InternalError, "internal error");

#undef TESSERA_DEFINE_ERROR

} // namespace tessera
