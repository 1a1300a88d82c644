// GPU discovery through the CUDA runtime.
#include <cuda_runtime.h>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "cuda/device.hpp"

namespace tessera::cuda {

bool compiled() noexcept {
  return true;
}

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

std::string unavailable_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return fmt::format("no usable GPU: {}", cudaGetErrorString(e));
  }
  return n == 0 ? "no GPU found" : "";
}

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  const int n = device_count();
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    CHECK_CUDA(cudaGetDeviceProperties(&p, i));
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    int current = 0;
    CHECK_CUDA(cudaGetDevice(&current));
    CHECK_CUDA(cudaSetDevice(i));
    CHECK_CUDA(cudaMemGetInfo(&d.memory_free, &d.memory_total));
    CHECK_CUDA(cudaSetDevice(current));
    out.push_back(d);
  }
  return out;
}

namespace {
std::string version_string(int v) {
  return v ? fmt::format("{}.{}", v / 1000, (v % 1000) / 10) : "";
}
} // namespace

std::string driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess)
    return "";
  return version_string(v);
}

std::string runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess)
    return "";
  return version_string(v);
}

} // namespace tessera::cuda
