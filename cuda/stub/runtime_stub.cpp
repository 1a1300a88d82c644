// Streams, events, buffers and NVML for builds without CUDA: constructing any of them throws
// NotCompiled; NVML reports itself unavailable.
#include "core/throw.hpp"
#include "cuda/buffer.hpp"
#include "cuda/nvml.hpp"
#include "cuda/staged.hpp"
#include "cuda/stream.hpp"

namespace tessera::cuda {

namespace {
[[noreturn]] void not_compiled(const char* what) {
  TESSERA_THROW(NotCompiled, "{} needs the CUDA backend, which this build of tessera lacks", what);
}
} // namespace

void StreamTraits::destroy(CUstream_st*) noexcept {}
void EventTraits::destroy(CUevent_st*) noexcept {}
unique_stream make_stream() {
  not_compiled("a CUDA stream");
}
void synchronize(CUstream_st*) {
  not_compiled("cuda::synchronize");
}
void device_synchronize() {
  not_compiled("cuda::device_synchronize");
}
StreamPool::StreamPool(int) {
  not_compiled("a CUDA stream pool");
}
void StreamPool::synchronize() const {}
Event::Event(bool) {
  not_compiled("a CUDA event");
}
void Event::record(CUstream_st*) {}
void Event::wait_on(CUstream_st*) const {}
void Event::synchronize() const {}
bool Event::done() const {
  return true;
}
float Event::elapsed_ms(const Event&, const Event&) {
  not_compiled("cuda::Event::elapsed_ms");
}

void* DeviceAllocator::allocate(std::size_t) {
  not_compiled("GPU memory");
}
void DeviceAllocator::release(void*) noexcept {}
void* PinnedAllocator::allocate(std::size_t) {
  not_compiled("pinned host memory");
}
void PinnedAllocator::release(void*) noexcept {}
void copy(void*, const void*, std::size_t bytes) {
  if (bytes != 0)
    not_compiled("cuda::copy");
}
void copy_async(CUstream_st*, void*, const void*, std::size_t bytes) {
  if (bytes != 0)
    not_compiled("cuda::copy_async");
}
void copy_2d_async(CUstream_st*, void*, std::size_t, const void*, std::size_t, std::size_t,
                   std::size_t) {
  not_compiled("cuda::copy_2d_async");
}
void memset_async(CUstream_st*, void*, int, std::size_t) {
  not_compiled("cuda::memset_async");
}
bool is_device_pointer(const void*) {
  return false;
}
bool is_pinned_host_pointer(const void*) {
  return false;
}
void* device_view_of_host(void*) {
  return nullptr;
}

StagedTranspose::StagedTranspose(StreamPool& pool, std::size_t chunk_bytes, StagedOutput output)
    : pool_(pool), chunk_bytes_(chunk_bytes), output_(output) {
  not_compiled("the staged GPU transpose");
}
StagedTimes StagedTranspose::run(DType, const void*, void*, std::int64_t, std::int64_t) {
  not_compiled("the staged GPU transpose");
}
StagedTimes StagedTranspose::phases(DType, const void*, void*, std::int64_t, std::int64_t) {
  not_compiled("the staged GPU transpose");
}

namespace nvml {
bool available() {
  return false;
}
std::string unavailable_reason() {
  return "this build of tessera has no CUDA backend";
}
std::string driver_version() {
  return "";
}
std::optional<Memory> memory(int) {
  return std::nullopt;
}
std::optional<unsigned> utilization(int) {
  return std::nullopt;
}
Sampler::Sampler(int cuda_device, std::chrono::milliseconds period)
    : device_(cuda_device), period_(period) {}
Sampler::~Sampler() = default;
Summary Sampler::stop() {
  return summary_;
}
void Sampler::sample() {}
void Sampler::run() {}
} // namespace nvml

} // namespace tessera::cuda
