// CUDA streams, a fixed pool of them, and events, for plain C++ callers. The runtime's types are
// only forward-declared here (cudaStream_t is CUstream_st*, cudaEvent_t is CUevent_st*), so code
// that includes this header never pulls in cuda_runtime.h. Without a CUDA build the constructors
// throw NotCompiled (cuda/stub/).
#pragma once

#include <vector>

#include "core/unique_handle.hpp"

struct CUstream_st;
struct CUevent_st;

namespace tessera::cuda {

struct StreamTraits {
  using type = CUstream_st*;
  static type null() noexcept { return nullptr; }
  static void destroy(type s) noexcept;
};
struct EventTraits {
  using type = CUevent_st*;
  static type null() noexcept { return nullptr; }
  static void destroy(type e) noexcept;
};
using unique_stream = unique_handle<StreamTraits>;
using unique_event = unique_handle<EventTraits>;

// A non-blocking stream on the current device (it does not synchronise with the legacy
// default stream).
unique_stream make_stream();

// Blocks until all work queued on `s` is done (nullptr: the legacy default stream).
void synchronize(CUstream_st* s);
// Blocks until all work on the current device is done.
void device_synchronize();

// A fixed set of non-blocking streams on the current device, used round-robin: chunk k of a
// pipelined copy/compute runs on stream k % size(), so H2D copies, kernels and D2H copies of
// successive chunks overlap.
class StreamPool {
public:
  static constexpr int kDefaultSize = 4;
  explicit StreamPool(int size = kDefaultSize);

  int size() const noexcept { return static_cast<int>(streams_.size()); }
  // Stream i mod size().
  CUstream_st* operator[](int i) const noexcept { return streams_[i % size()].get(); }
  void synchronize() const;

private:
  std::vector<unique_stream> streams_;
};

// A CUDA event; timing events measure elapsed time between two records.
class Event {
public:
  explicit Event(bool timing = true);
  void record(CUstream_st* s);
  // Makes `s` wait until this event has completed (no host blocking).
  void wait_on(CUstream_st* s) const;
  void synchronize() const;
  // True when the work before the last record() is done.
  bool done() const;
  CUevent_st* get() const noexcept { return e_.get(); }
  // Milliseconds from `start` to `stop` (both recorded, both completed, timing events).
  static float elapsed_ms(const Event& start, const Event& stop);

private:
  unique_event e_;
};

} // namespace tessera::cuda
