// Built instead of cuda/*.cu when tessera is compiled without CUDA: no devices, and every
// launcher throws NotCompiled.
#include <atomic>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "cuda/device.hpp"

namespace tessera::detail {
void throw_cuda_error(int code, const char* expr, const char* file, int line) {
  throw CudaError(fmt::format("{} failed with code {}", expr, code), file, line);
}
void throw_nccl_error(int code, const char* expr, const char* file, int line) {
  throw CudaError(fmt::format("{} failed with NCCL code {}", expr, code), file, line);
}
} // namespace tessera::detail

namespace tessera::cuda {
namespace {
std::atomic<long long> g_queries{0}; // runtime_queries(): the calls a CUDA build would make
void count_query() noexcept {
  g_queries.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

bool compiled() noexcept {
  return false;
}
long long runtime_queries() noexcept {
  return g_queries.load(std::memory_order_relaxed);
}
int device_count() noexcept {
  count_query();
  return 0;
}
std::string unavailable_reason() {
  count_query();
  return "this build of tessera has no CUDA backend";
}
std::vector<DeviceInfo> devices() {
  count_query();
  return {};
}
std::string driver_version() {
  count_query();
  return "";
}
std::string runtime_version() {
  return "";
}
int bind_device(int) {
  count_query();
  TESSERA_THROW(NotCompiled, "cannot bind a GPU: this build of tessera has no CUDA backend");
}
int ensure_device_bound() {
  count_query();
  TESSERA_THROW(NotCompiled, "cannot bind a GPU: this build of tessera has no CUDA backend");
}
int current_device() {
  count_query();
  TESSERA_THROW(NotCompiled, "no current GPU: this build of tessera has no CUDA backend");
}
} // namespace tessera::cuda
