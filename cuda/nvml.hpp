// GPU memory use and utilisation through NVML, loaded at run time with
// dlopen("libnvidia-ml.so.1"): the build needs no NVML headers, and a machine without the
// driver still runs (every query then says "unavailable").
//
//   cuda::nvml::Sampler s(device);      // samples in a background thread
//   … GPU work …
//   cuda::nvml::Summary g = s.stop();   // mean utilisation, peak memory used
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/backend_fn.hpp"

namespace tessera::cuda::nvml {

// True when NVML was loaded and initialised (tried once per process).
TESSERA_CUDA_FN_OR(false, bool available());
// Why available() is false ("" when it is true).
TESSERA_CUDA_FN_OR("this build of tessera has no CUDA backend", std::string unavailable_reason());
// The NVIDIA driver version ("580.159.04"), "" when NVML is unavailable.
TESSERA_CUDA_FN_OR("", std::string driver_version());
// The CUDA version the driver supports (13000 for 13.0), 0 when NVML is unavailable.
TESSERA_CUDA_FN_OR(0, int cuda_driver_version());

struct Memory {
  std::size_t total = 0;
  std::size_t used = 0;
};
// For the CUDA device index `cuda_device` (mapped to NVML by PCI bus id, so
// CUDA_VISIBLE_DEVICES is honoured). Empty when NVML or the device is unavailable.
TESSERA_CUDA_FN_OR(std::nullopt, std::optional<Memory> memory(int cuda_device));
// What `tessera info` shows of one GPU, read without starting the CUDA runtime, whose first
// call is most of a listing's time (docs/performance.md, "GPU drivers at start-up").
struct Listed {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  std::string pci_bus_id;
  Memory memory;
};
// The GPUs the CUDA runtime would see, in its order: all of them, or those CUDA_VISIBLE_DEVICES
// names by index or by UUID. Empty optional when NVML cannot tell (no NVML, a MIG instance or
// any other form of CUDA_VISIBLE_DEVICES): the caller then asks the runtime.
TESSERA_CUDA_FN_OR(std::nullopt, std::optional<std::vector<Listed>> visible_devices());

// Percent of the last sample period during which a kernel ran.
TESSERA_CUDA_FN_OR(std::nullopt, std::optional<unsigned> utilization(int cuda_device));

struct Summary {
  bool valid = false; // false when NVML was unavailable or no sample was taken
  int samples = 0;
  double mean_utilization = 0.0; // percent
  std::size_t max_memory_used = 0;
  std::size_t memory_total = 0;
};

// Samples utilisation and memory of one device every `period` until stop() or destruction.
class Sampler {
public:
  TESSERA_CUDA_FN_OR(, explicit Sampler(int cuda_device, std::chrono::milliseconds period =
                                                             std::chrono::milliseconds(20)));
  TESSERA_CUDA_FN_OR(, ~Sampler());
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Stops sampling (idempotent) and returns what was seen; takes one last sample so that even a
  // short region has one.
  TESSERA_CUDA_FN_OR(summary_, Summary stop());

private:
  TESSERA_CUDA_FN_OR(, void sample());
  TESSERA_CUDA_FN_OR(, void run());

  int device_ = -1;
  std::chrono::milliseconds period_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  Summary summary_;
  double util_sum_ = 0.0;
  std::thread thread_;
};

} // namespace tessera::cuda::nvml
