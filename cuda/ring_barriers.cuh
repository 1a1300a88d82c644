// The barriers of a ring of shared-memory slots filled by asynchronous copies (cp.async) on
// compute capability 9.0 and later: for each slot one barrier that says "filled" (the copying
// threads arrive when their copies into it have landed) and one that says "emptied" (the
// consuming threads arrive once they have read it).
//
// cuda::pipeline offers the same, but each of its waits reads the global timer and then backs
// off with sleeps once it has polled a while; a warp that adds a few dozen values per slot pays
// that on every slot. Here a wait is the hardware's own suspended try_wait, in a loop.
#pragma once

#include <cstdint>

namespace tessera::cuda::detail {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Sets up a barrier that completes a phase after `count` arrivals. One thread calls it; the
// block synchronizes before any thread uses the barrier.
__device__ __forceinline__ void ring_barrier_init(std::uint64_t* bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count)
               : "memory");
}

// Waits until the phase of parity `parity` of `bar` has completed (acquire: what the arriving
// threads wrote before arriving is visible after).
__device__ __forceinline__ void ring_barrier_wait(std::uint64_t* bar, std::uint32_t parity) {
  const std::uint32_t a = shared_address(bar);
  std::uint32_t done = 0;
  do {
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(a), "r"(parity)
                 : "memory");
  } while (!done);
}

// One arrival of the calling thread (release: its reads and writes before come first).
__device__ __forceinline__ void ring_barrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
}

// One arrival of the calling thread once all its cp.async copies issued so far have landed.
// The barrier's count includes this arrival (noinc).
__device__ __forceinline__ void ring_barrier_arrive_on_copies(std::uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(shared_address(bar))
               : "memory");
}

#endif

} // namespace tessera::cuda::detail
