// NVML through dlopen: a handful of entry points with their C signatures declared here.
#include "cuda/nvml.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
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
// nvmlPciInfo_t as of NVML 11 and later (the _v3 query fills this layout).
struct nvmlPciInfo {
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
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
  // For visible_devices(); optional (an old driver lacking one only loses the fast listing).
  nvmlReturn (*count)(unsigned*) = nullptr;
  nvmlReturn (*by_uuid)(const char*, nvmlDevice*) = nullptr;
  nvmlReturn (*name)(nvmlDevice, char*, unsigned) = nullptr;
  nvmlReturn (*capability)(nvmlDevice, int*, int*) = nullptr;
  nvmlReturn (*pci)(nvmlDevice, nvmlPciInfo*) = nullptr;
  nvmlReturn (*cuda_driver)(int*) = nullptr;
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
    if (ok) {
      bind(a.lib, "nvmlDeviceGetCount_v2", a.count);
      bind(a.lib, "nvmlDeviceGetHandleByUUID", a.by_uuid);
      bind(a.lib, "nvmlDeviceGetName", a.name);
      bind(a.lib, "nvmlDeviceGetCudaComputeCapability", a.capability);
      bind(a.lib, "nvmlDeviceGetPciInfo_v3", a.pci);
      bind(a.lib, "nvmlSystemGetCudaDriverVersion_v2", a.cuda_driver);
    }
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

int cuda_driver_version() {
  const Api& a = api();
  int v = 0;
  if (a.init == nullptr || !a.cuda_driver || a.cuda_driver(&v) != 0)
    return 0;
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

namespace {

// CUDA_VISIBLE_DEVICES as the runtime reads it, when every entry is an index or a full GPU UUID.
// The runtime stops at the first entry it cannot use; anything this does not follow (MIG
// instances, partial UUIDs) returns nothing, and the caller asks the runtime.
std::optional<std::vector<nvmlDevice>> visible_handles(const Api& a) {
  unsigned n = 0;
  if (a.count(&n) != 0)
    return std::nullopt;
  std::vector<nvmlDevice> out;
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  if (env == nullptr) {
    for (unsigned i = 0; i < n; ++i) {
      nvmlDevice d = nullptr;
      if (a.by_index(i, &d) != 0)
        return std::nullopt;
      out.push_back(d);
    }
    return out;
  }
  std::string list(env);
  std::size_t at = 0;
  while (at <= list.size() && !list.empty()) {
    const std::size_t end = std::min(list.find(',', at), list.size());
    const std::string entry = list.substr(at, end - at);
    nvmlDevice d = nullptr;
    if (!entry.empty() && entry.find_first_not_of("0123456789") == std::string::npos) {
      const unsigned long i = std::stoul(entry);
      if (i >= n)
        break; // the runtime ignores this entry and the rest
      if (a.by_index(static_cast<unsigned>(i), &d) != 0)
        return std::nullopt;
    } else if (entry.rfind("GPU-", 0) == 0 && entry.size() == 40) {
      if (a.by_uuid(entry.c_str(), &d) != 0)
        return std::nullopt;
    } else {
      return std::nullopt;
    }
    out.push_back(d);
    at = end + 1;
  }
  return out;
}

} // namespace

std::optional<std::vector<Listed>> visible_devices() {
  const Api& a = api();
  if (a.init == nullptr || !a.count || !a.by_uuid || !a.name || !a.capability || !a.pci)
    return std::nullopt;
  const auto handles = visible_handles(a);
  if (!handles)
    return std::nullopt;
  std::vector<Listed> out;
  for (nvmlDevice d : *handles) {
    Listed l;
    char name[96] = {};
    nvmlPciInfo pci{};
    nvmlMemoryInfo m{};
    if (a.name(d, name, sizeof name) != 0 || a.capability(d, &l.cc_major, &l.cc_minor) != 0 ||
        a.pci(d, &pci) != 0 || a.mem(d, &m) != 0)
      return std::nullopt;
    l.name = name;
    l.pci_bus_id = pci.bus_id;
    l.memory = Memory{static_cast<std::size_t>(m.total), static_cast<std::size_t>(m.used)};
    out.push_back(std::move(l));
  }
  return out;
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
