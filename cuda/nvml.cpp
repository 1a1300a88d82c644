// NVML through dlopen: a handful of entry points with their C signatures declared here.
#include "cuda/nvml.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <mutex>

namespace tessera::cuda::nvml {

namespace {

using nvmlReturn = int; // NVML_SUCCESS == 0
using nvmlDevice = struct nvmlDevice_st*;
struct nvmlMemoryInfo {
  unsigned long long total, free, used;
};
struct nvmlUtilizationRates {
  unsigned int gpu, memory;
};

struct Api {
  void* lib = nullptr;
  std::string reason;
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*driver)(char*, unsigned) = nullptr;
  nvmlReturn (*by_bus)(const char*, nvmlDevice*) = nullptr;
  nvmlReturn (*by_index)(unsigned, nvmlDevice*) = nullptr;
  nvmlReturn (*mem)(nvmlDevice, nvmlMemoryInfo*) = nullptr;
  nvmlReturn (*util)(nvmlDevice, nvmlUtilizationRates*) = nullptr;
};

template <class F>
bool bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

// Loaded once, never unloaded: NVML keeps no state worth releasing before exit.
const Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    a.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (a.lib == nullptr) {
      a.reason = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
      return;
    }
    const bool ok = bind(a.lib, "nvmlInit_v2", a.init) &&
                    bind(a.lib, "nvmlSystemGetDriverVersion", a.driver) &&
                    bind(a.lib, "nvmlDeviceGetHandleByPciBusId_v2", a.by_bus) &&
                    bind(a.lib, "nvmlDeviceGetHandleByIndex_v2", a.by_index) &&
                    bind(a.lib, "nvmlDeviceGetMemoryInfo", a.mem) &&
                    bind(a.lib, "nvmlDeviceGetUtilizationRates", a.util);
    if (!ok) {
      a.reason = "libnvidia-ml.so.1 lacks an expected entry point";
      a.init = nullptr;
      return;
    }
    if (a.init() != 0) {
      a.reason = "nvmlInit failed";
      a.init = nullptr;
    }
  });
  return a;
}

std::optional<nvmlDevice> handle(int cuda_device) {
  const Api& a = api();
  if (a.init == nullptr)
    return std::nullopt;
  nvmlDevice d = nullptr;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) == cudaSuccess) {
    if (a.by_bus(bus, &d) == 0)
      return d;
  } else {
    cudaGetLastError();
  }
  if (a.by_index(static_cast<unsigned>(cuda_device), &d) == 0)
    return d;
  return std::nullopt;
}

} // namespace

bool available() {
  return api().init != nullptr;
}

std::string unavailable_reason() {
  return api().reason;
}

std::string driver_version() {
  const Api& a = api();
  char v[96] = {};
  if (a.init == nullptr || a.driver(v, sizeof v) != 0)
    return "";
  return v;
}

std::optional<Memory> memory(int cuda_device) {
  const auto h = handle(cuda_device);
  nvmlMemoryInfo m{};
  if (!h || api().mem(*h, &m) != 0)
    return std::nullopt;
  return Memory{static_cast<std::size_t>(m.total), static_cast<std::size_t>(m.used)};
}

std::optional<unsigned> utilization(int cuda_device) {
  const auto h = handle(cuda_device);
  nvmlUtilizationRates u{};
  if (!h || api().util(*h, &u) != 0)
    return std::nullopt;
  return u.gpu;
}

Sampler::Sampler(int cuda_device, std::chrono::milliseconds period)
    : device_(cuda_device), period_(period) {
  if (available())
    thread_ = std::thread([this] { run(); });
}

Sampler::~Sampler() {
  stop();
}

void Sampler::sample() {
  const auto u = utilization(device_);
  const auto m = memory(device_);
  std::lock_guard lock(mutex_);
  if (u && m) {
    summary_.valid = true;
    summary_.samples += 1;
    util_sum_ += *u;
    summary_.mean_utilization = util_sum_ / summary_.samples;
    summary_.max_memory_used = std::max(summary_.max_memory_used, m->used);
    summary_.memory_total = m->total;
  }
}

void Sampler::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    sample();
    lock.lock();
    cv_.wait_for(lock, period_, [this] { return stopping_; });
  }
}

Summary Sampler::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_)
      return summary_;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
    sample();
  }
  std::lock_guard lock(mutex_);
  return summary_;
}

} // namespace tessera::cuda::nvml
