// Streams, the stream pool and events on top of the CUDA runtime.
#include "cuda/stream.hpp"

#include <cuda_runtime.h>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"

namespace tessera::cuda {

void StreamTraits::destroy(CUstream_st* s) noexcept {
  if (const cudaError_t e = cudaStreamDestroy(s); e != cudaSuccess)
    log::warn("cudaStreamDestroy failed: {}", cudaGetErrorString(e));
}

void EventTraits::destroy(CUevent_st* e) noexcept {
  if (const cudaError_t rc = cudaEventDestroy(e); rc != cudaSuccess)
    log::warn("cudaEventDestroy failed: {}", cudaGetErrorString(rc));
}

unique_stream make_stream() {
  cudaStream_t s = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return unique_stream(s);
}

void synchronize(CUstream_st* s) {
  CHECK_CUDA(cudaStreamSynchronize(s));
}

void device_synchronize() {
  CHECK_CUDA(cudaDeviceSynchronize());
}

void wait_for_default_stream() {
  // An event recorded on the legacy stream is queued behind every blocking stream's prior work;
  // synchronising the stream itself would not wait for those.
  const Event queued(false);
  CHECK_CUDA(cudaEventRecord(queued.get(), cudaStreamLegacy));
  queued.synchronize();
}

StreamPool::StreamPool(int size) {
  TESSERA_REQUIRE(size >= 1, InputError, "a stream pool needs at least one stream, got {}", size);
  streams_.reserve(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i)
    streams_.push_back(make_stream());
}

void StreamPool::synchronize() const {
  for (const auto& s : streams_)
    CHECK_CUDA(cudaStreamSynchronize(s.get()));
}

Event::Event(bool timing) {
  cudaEvent_t e = nullptr;
  CHECK_CUDA(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  e_.reset(e);
}

void Event::record(CUstream_st* s) {
  CHECK_CUDA(cudaEventRecord(e_.get(), s));
}

void Event::wait_on(CUstream_st* s) const {
  CHECK_CUDA(cudaStreamWaitEvent(s, e_.get(), 0));
}

void Event::synchronize() const {
  CHECK_CUDA(cudaEventSynchronize(e_.get()));
}

bool Event::done() const {
  const cudaError_t e = cudaEventQuery(e_.get());
  if (e == cudaErrorNotReady)
    return false;
  CHECK_CUDA(e);
  return true;
}

float Event::elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0.0f;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

} // namespace tessera::cuda
