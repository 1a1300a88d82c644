// GPU discovery, reachable from plain C++ (no CUDA headers). Without a CUDA build these come
// from cuda/stub/ and report no devices.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tessera::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  std::size_t memory_total = 0, memory_free = 0;
};

// True when this build contains the CUDA backend.
bool compiled() noexcept;
// Usable devices; 0 when not compiled, no driver or no GPU (never throws).
int device_count() noexcept;
// Why device_count() is 0, for logs ("no CUDA driver", "built without CUDA", …); "" otherwise.
std::string unavailable_reason();
std::vector<DeviceInfo> devices();
// CUDA driver version as "13.0", or "" when there is no driver.
std::string driver_version();
std::string runtime_version();

} // namespace tessera::cuda
