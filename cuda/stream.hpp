// CUDA streams, a fixed pool of them, and events, for plain C++ callers. The runtime's types are
// only forward-declared here (cudaStream_t is CUstream_st*, cudaEvent_t is CUevent_st*), so code
// that includes this header never pulls in cuda_runtime.h. Without a CUDA build the constructors
// throw NotCompiled (core/backend_fn.hpp).
#pragma once

#include <vector>

#include "core/backend_fn.hpp"
#include "core/unique_handle.hpp"

struct CUstream_st;
struct CUevent_st;

namespace tessera::cuda {

struct StreamTraits {
  using type = CUstream_st*;
  static type null() noexcept { return nullptr; }
  TESSERA_CUDA_FN_OR(, static void destroy(type s) noexcept);
};
struct EventTraits {
  using type = CUevent_st*;
  static type null() noexcept { return nullptr; }
  TESSERA_CUDA_FN_OR(, static void destroy(type e) noexcept);
};
using unique_stream = unique_handle<StreamTraits>;
using unique_event = unique_handle<EventTraits>;

// A non-blocking stream on the current device (it does not synchronise with the legacy
// default stream).
TESSERA_CUDA_FN(unique_stream make_stream());

// Blocks until all work queued on `s` is done (nullptr: the legacy default stream).
TESSERA_CUDA_FN(void synchronize(CUstream_st* s));
// Blocks until all work on the current device is done.
TESSERA_CUDA_FN(void device_synchronize());
// Blocks until the work queued so far on the legacy default stream is done, and through that
// stream's implicit barrier the work on every blocking stream (per-thread default streams
// included): what a caller's kernels there wrote into device memory is then complete, though
// tessera's own streams are non-blocking. Work on the caller's non-blocking streams is not
// covered.
TESSERA_CUDA_FN(void wait_for_default_stream());

// A fixed set of non-blocking streams on the current device, used round-robin: chunk k of a
// pipelined copy/compute runs on stream k % size(), so H2D copies, kernels and D2H copies of
// successive chunks overlap.
class StreamPool {
public:
  static constexpr int kDefaultSize = 4;
  TESSERA_CUDA_FN(explicit StreamPool(int size = kDefaultSize));

  int size() const noexcept { return static_cast<int>(streams_.size()); }
  // Stream i mod size().
  CUstream_st* operator[](int i) const noexcept { return streams_[i % size()].get(); }
  TESSERA_CUDA_FN_OR(, void synchronize() const);

private:
  std::vector<unique_stream> streams_;
};

// A CUDA event; timing events measure elapsed time between two records.
class Event {
public:
  TESSERA_CUDA_FN(explicit Event(bool timing = true));
  TESSERA_CUDA_FN_OR(, void record(CUstream_st* s));
  // Makes `s` wait until this event has completed (no host blocking).
  TESSERA_CUDA_FN_OR(, void wait_on(CUstream_st* s) const);
  TESSERA_CUDA_FN_OR(, void synchronize() const);
  // True when the work before the last record() is done.
  TESSERA_CUDA_FN_OR(true, bool done() const);
  CUevent_st* get() const noexcept { return e_.get(); }
  // Milliseconds from `start` to `stop` (both recorded, both completed, timing events).
  TESSERA_CUDA_FN(static float elapsed_ms(const Event& start, const Event& stop));

private:
  unique_event e_;
};

} // namespace tessera::cuda
