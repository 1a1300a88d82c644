// The throw helpers behind CHECK_CUDA and CHECK_NCCL (host C++, so messages can use fmt).
#include <cuda_runtime.h>

#include "core/check.hpp"
#include "core/throw.hpp"

namespace tessera::detail {

void throw_cuda_error(int code, const char* expr, const char* file, int line) {
  const auto e = static_cast<cudaError_t>(code);
  throw CudaError(
      fmt::format("{} failed: {} ({})", expr, cudaGetErrorString(e), cudaGetErrorName(e)), file,
      line);
}

// NCCL codes are reported by number; the NCCL exchange adds names where it is built in.
void throw_nccl_error(int code, const char* expr, const char* file, int line) {
  throw CudaError(fmt::format("{} failed with NCCL code {}", expr, code), file, line);
}

} // namespace tessera::detail
