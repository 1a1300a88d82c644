// Built instead of cuda/*.cu when tessera is compiled without CUDA: no devices, and every
// launcher throws NotCompiled.
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
bool compiled() noexcept {
  return false;
}
int device_count() noexcept {
  return 0;
}
std::string unavailable_reason() {
  return "this build of tessera has no CUDA backend";
}
std::vector<DeviceInfo> devices() {
  return {};
}
std::string driver_version() {
  return "";
}
std::string runtime_version() {
  return "";
}
int bind_device(int) {
  TESSERA_THROW(NotCompiled, "cannot bind a GPU: this build of tessera has no CUDA backend");
}
int ensure_device_bound() {
  TESSERA_THROW(NotCompiled, "cannot bind a GPU: this build of tessera has no CUDA backend");
}
int current_device() {
  TESSERA_THROW(NotCompiled, "no current GPU: this build of tessera has no CUDA backend");
}
} // namespace tessera::cuda
