// GPU discovery and device binding, reachable from plain C++ (no CUDA headers). Without a CUDA
// build (core/backend_fn.hpp): no devices, and bind_device() throws NotCompiled.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "core/backend_fn.hpp"

namespace tessera::cuda {

namespace detail {
// The calls that ask the CUDA runtime or NVML, for runtime_queries(); a build without CUDA
// counts the calls a CUDA build would make.
inline std::atomic<long long> runtime_query_count{0};
template <class T>
T counted(T value) {
  runtime_query_count.fetch_add(1, std::memory_order_relaxed);
  return value;
}
[[noreturn]] inline void counted_not_compiled(const char* function) {
  runtime_query_count.fetch_add(1, std::memory_order_relaxed);
  ::tessera::detail::cuda_not_compiled(function);
}
} // namespace detail

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  std::size_t memory_total = 0, memory_free = 0;
  int multiprocessors = 0;
  std::string pci_bus_id; // "0000:1B:00.0"
  // NVIDIA driver version from NVML ("580.159.04"), else the CUDA driver API version ("13.0").
  std::string driver;
};

// What tells GPUs apart across the nodes of a job: the UUID (PCI bus ids repeat from node to
// node); the bus id is for messages.
struct DeviceIdentity {
  std::array<unsigned char, 16> uuid{};
  std::string pci_bus_id;
};

// True when this build contains the CUDA backend.
TESSERA_CUDA_FN_OR(false, bool compiled() noexcept);
// Usable devices; 0 when not compiled, no driver or no GPU (never throws).
TESSERA_CUDA_FN_OR(::tessera::cuda::detail::counted(0), int device_count() noexcept);
// Why device_count() is 0, for logs ("no CUDA driver", "built without CUDA", …); "" otherwise.
TESSERA_CUDA_FN_OR(
    ::tessera::cuda::detail::counted(std::string("this build of tessera has no CUDA backend")),
    std::string unavailable_reason());
TESSERA_CUDA_FN_OR(::tessera::cuda::detail::counted(std::vector<DeviceInfo>{}),
                   std::vector<DeviceInfo> devices());
// devices() for a listing: from NVML when it can tell (then without starting the CUDA runtime,
// see nvml::visible_devices; `multiprocessors` is then 0), else from devices().
TESSERA_CUDA_FN_OR(::tessera::cuda::detail::counted(std::vector<DeviceInfo>{}),
                   std::vector<DeviceInfo> list_devices());
// CUDA driver version as "13.0", or "" when there is no driver.
TESSERA_CUDA_FN_OR(::tessera::cuda::detail::counted(std::string{}), std::string driver_version());
// The CUDA runtime version this build was compiled with ("12.4"; "" without CUDA). A constant:
// asks nothing of the runtime, so CPU-only runs may record it.
TESSERA_CUDA_FN_OR("", std::string runtime_version());

// One GPU per rank: makes device (node_local_rank mod device_count()) current for the calling
// thread and returns its index. Ranks of one node share GPUs round-robin when there are more
// ranks than GPUs. Throws CudaError when there is no usable device.
TESSERA_CUDA_FN_OR((::tessera::cuda::detail::counted_not_compiled(__func__), 0),
                   int bind_device(int node_local_rank));
// The identity of device `index`; throws CudaError when the runtime cannot tell it.
TESSERA_CUDA_FN_OR((::tessera::cuda::detail::counted_not_compiled(__func__),
                    ::tessera::cuda::DeviceIdentity{}),
                   DeviceIdentity device_identity(int index));
// The calling thread's current device.
TESSERA_CUDA_FN_OR((::tessera::cuda::detail::counted_not_compiled(__func__), 0),
                   int current_device());
// For code that has no communicator at hand (a plan's engine): binds this process once, unless
// bind_device() already did, to (node-local rank mod device_count()) with the node-local rank
// read from the launcher's environment (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID,
// MPI_LOCALRANKID, MV2_COMM_WORLD_LOCAL_RANK, PMI_LOCAL_RANK; 0 when none is set). Makes the
// bound device current for the calling thread and returns it.
TESSERA_CUDA_FN_OR((::tessera::cuda::detail::counted_not_compiled(__func__), 0),
                   int ensure_device_bound());

// How many calls of the functions above (all but compiled() and runtime_version()) this
// process has made: each asks the CUDA runtime or NVML (the stubs count the calls that would).
// CUDA starts only when a GPU path runs: tests check that a CPU-only command adds none.
inline long long runtime_queries() noexcept {
  return detail::runtime_query_count.load(std::memory_order_relaxed);
}

} // namespace tessera::cuda
