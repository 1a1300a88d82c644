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

namespace tessera::cuda::nvml {

// True when NVML was loaded and initialised (tried once per process).
bool available();
// Why available() is false ("" when it is true).
std::string unavailable_reason();
// The NVIDIA driver version ("580.159.04"), "" when NVML is unavailable.
std::string driver_version();

struct Memory {
  std::size_t total = 0;
  std::size_t used = 0;
};
// For the CUDA device index `cuda_device` (mapped to NVML by PCI bus id, so
// CUDA_VISIBLE_DEVICES is honoured). Empty when NVML or the device is unavailable.
std::optional<Memory> memory(int cuda_device);
// Percent of the last sample period during which a kernel ran.
std::optional<unsigned> utilization(int cuda_device);

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
  explicit Sampler(int cuda_device,
                   std::chrono::milliseconds period = std::chrono::milliseconds(20));
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Stops sampling (idempotent) and returns what was seen; takes one last sample so that even a
  // short region has one.
  Summary stop();

private:
  void sample();
  void run();

  int device_;
  std::chrono::milliseconds period_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  Summary summary_;
  double util_sum_ = 0.0;
  std::thread thread_;
};

} // namespace tessera::cuda::nvml
