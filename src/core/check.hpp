// One place for the CHECK_* macros of every library tessera calls. Each evaluates the call once
// and throws a typed tessera::Error with file and line on failure. The throw helpers live with
// the library they wrap (mpi/, io/, cuda/), so this header includes none of their headers:
// a macro only needs MPI_SUCCESS, cudaSuccess… where it is expanded.
#pragma once

#include "core/error.hpp" // no fmt: CUDA sources include this

namespace tessera::detail {
[[noreturn]] void throw_mpi_error(int code, const char* expr, const char* file, int line);
[[noreturn]] void throw_hdf5_error(const char* expr, const char* file, int line);
[[noreturn]] void throw_cuda_error(int code, const char* expr, const char* file, int line);
[[noreturn]] void throw_nccl_error(int code, const char* expr, const char* file, int line);
} // namespace tessera::detail

#define CHECK_MPI(call)                                                                            \
  do {                                                                                             \
    const int tessera_rc_ = (call);                                                                \
    if (tessera_rc_ != MPI_SUCCESS)                                                                \
      ::tessera::detail::throw_mpi_error(tessera_rc_, #call, __FILE__, __LINE__);                  \
  } while (false)

// HDF5 returns a negative herr_t / hid_t on failure.
#define CHECK_HDF5(call)                                                                           \
  do {                                                                                             \
    if ((call) < 0)                                                                                \
      ::tessera::detail::throw_hdf5_error(#call, __FILE__, __LINE__);                              \
  } while (false)

#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    const auto tessera_rc_ = (call);                                                               \
    if (tessera_rc_ != cudaSuccess)                                                                \
      ::tessera::detail::throw_cuda_error(static_cast<int>(tessera_rc_), #call, __FILE__,          \
                                          __LINE__);                                               \
  } while (false)

// After a kernel launch: launch-configuration errors surface here, not at the next sync.
#define CHECK_CUDA_LAUNCH() CHECK_CUDA(cudaGetLastError())

#define CHECK_NCCL(call)                                                                           \
  do {                                                                                             \
    const auto tessera_rc_ = (call);                                                               \
    if (tessera_rc_ != ncclSuccess)                                                                \
      ::tessera::detail::throw_nccl_error(static_cast<int>(tessera_rc_), #call, __FILE__,          \
                                          __LINE__);                                               \
  } while (false)
