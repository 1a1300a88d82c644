// Small helpers shared by the kernel files: the index type, per-device properties cached for
// launch sizing, and fmt-free argument checks (nvcc cannot compile fmt's compile-time checks).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/check.hpp"
#include "core/error.hpp"

namespace tessera::cuda::detail {

using i64 = long long;

// Multiprocessors of the current device (cached per device).
inline int sm_count() {
  static int cache[64] = {};
  int dev = 0;
  CHECK_CUDA(cudaGetDevice(&dev));
  if (dev < 64 && cache[dev] != 0)
    return cache[dev];
  int n = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  if (dev < 64)
    cache[dev] = n;
  return n;
}

[[noreturn]] inline void bad_argument(const std::string& what, const char* file, int line) {
  throw InputError(what, file, line);
}

#define TESSERA_CUDA_REQUIRE(cond, message)                                                        \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::tessera::cuda::detail::bad_argument(message, __FILE__, __LINE__);                          \
  } while (false)

inline std::string shape_str(i64 rows, i64 cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

inline bool aligned_to(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

} // namespace tessera::cuda::detail
