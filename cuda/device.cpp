// GPU discovery and device binding through the CUDA runtime (memory and driver version through
// NVML when it can be loaded, which creates no CUDA context).
#include "cuda/device.hpp"

#include <cuda_runtime.h>

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "cuda/nvml.hpp"

namespace tessera::cuda {

namespace {
void count_query() noexcept {
  detail::runtime_query_count.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

bool compiled() noexcept {
  return true;
}

int device_count() noexcept {
  count_query();
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

std::string unavailable_reason() {
  count_query();
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return fmt::format("no usable GPU: {}", cudaGetErrorString(e));
  }
  return n == 0 ? "no GPU found" : "";
}

std::vector<DeviceInfo> devices() {
  count_query();
  std::vector<DeviceInfo> out;
  const int n = device_count();
  const std::string nvml_driver = nvml::driver_version();
  const std::string cuda_driver = driver_version();
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    CHECK_CUDA(cudaGetDeviceProperties(&p, i));
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.multiprocessors = p.multiProcessorCount;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess)
      d.pci_bus_id = bus;
    else
      cudaGetLastError();
    d.driver = nvml_driver.empty() ? cuda_driver : nvml_driver;
    if (const auto m = nvml::memory(i)) {
      d.memory_total = m->total;
      d.memory_free = m->total - m->used;
    } else {
      // Without NVML: ask the runtime, which needs a context on that device.
      int current = 0;
      CHECK_CUDA(cudaGetDevice(&current));
      CHECK_CUDA(cudaSetDevice(i));
      CHECK_CUDA(cudaMemGetInfo(&d.memory_free, &d.memory_total));
      CHECK_CUDA(cudaSetDevice(current));
    }
    out.push_back(d);
  }
  return out;
}

std::vector<DeviceInfo> list_devices() {
  count_query();
  const auto listed = nvml::visible_devices();
  if (!listed)
    return devices();
  std::vector<DeviceInfo> out;
  const std::string driver = nvml::driver_version();
  for (const auto& l : *listed) {
    DeviceInfo d;
    d.index = static_cast<int>(out.size());
    d.name = l.name;
    d.cc_major = l.cc_major;
    d.cc_minor = l.cc_minor;
    d.pci_bus_id = l.pci_bus_id;
    d.driver = driver;
    d.memory_total = l.memory.total;
    d.memory_free = l.memory.total - l.memory.used;
    out.push_back(std::move(d));
  }
  return out;
}

DeviceIdentity device_identity(int index) {
  count_query();
  cudaDeviceProp p{};
  CHECK_CUDA(cudaGetDeviceProperties(&p, index));
  char bus[32] = {};
  CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, index));
  DeviceIdentity id;
  static_assert(sizeof p.uuid.bytes == std::tuple_size_v<decltype(id.uuid)>);
  std::memcpy(id.uuid.data(), p.uuid.bytes, id.uuid.size());
  id.pci_bus_id = bus;
  return id;
}

namespace {
std::string version_string(int v) {
  return v ? fmt::format("{}.{}", v / 1000, (v % 1000) / 10) : "";
}
} // namespace

std::string driver_version() {
  count_query();
  int v = nvml::cuda_driver_version(); // without the runtime when NVML answers
  if (v == 0 && cudaDriverGetVersion(&v) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return version_string(v);
}

std::string runtime_version() {
  return version_string(CUDART_VERSION);
}

namespace {
std::atomic<int> g_bound{-1}; // the device bind_device() chose for this process, -1: none
} // namespace

int bind_device(int node_local_rank) {
  count_query();
  const int n = device_count();
  if (n == 0)
    TESSERA_THROW(CudaError, "cannot bind a GPU to this rank: {}", unavailable_reason());
  TESSERA_REQUIRE(node_local_rank >= 0, InternalError, "negative node-local rank {}",
                  node_local_rank);
  const int dev = node_local_rank % n;
  CHECK_CUDA(cudaSetDevice(dev));
  g_bound.store(dev);
  return dev;
}

int ensure_device_bound() {
  count_query();
  int dev = g_bound.load();
  if (dev < 0) {
    int local = 0;
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
                             "MV2_COMM_WORLD_LOCAL_RANK", "PMI_LOCAL_RANK"})
      if (const char* v = std::getenv(name); v != nullptr && *v != '\0') {
        local = std::atoi(v);
        break;
      }
    return bind_device(local);
  }
  CHECK_CUDA(cudaSetDevice(dev));
  return dev;
}

int current_device() {
  count_query();
  int d = 0;
  CHECK_CUDA(cudaGetDevice(&d));
  return d;
}

} // namespace tessera::cuda
