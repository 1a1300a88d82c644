// Owning buffers of device memory and of pinned (page-locked) host memory, and the copies
// between them. Pinned buffers are what makes host<->device copies asynchronous: a copy from
// pageable memory blocks the host and cannot overlap a kernel.
#pragma once

#include <cstddef>
#include <utility>

#include "core/backend_fn.hpp"

struct CUstream_st;

namespace tessera::cuda {

// Allocation policies of Buffer: allocate(bytes > 0) throws ResourceError naming the size when
// the memory is not there (NotCompiled without CUDA); release() never throws (it logs).
struct DeviceAllocator { // cudaMalloc'd bytes on the current device
  TESSERA_CUDA_FN(static void* allocate(std::size_t bytes));
  TESSERA_CUDA_FN_OR(, static void release(void* p) noexcept);
};
struct PinnedAllocator { // cudaMallocHost'd page-locked host memory
  TESSERA_CUDA_FN(static void* allocate(std::size_t bytes));
  TESSERA_CUDA_FN_OR(, static void release(void* p) noexcept);
};

// Owning bytes from `Allocator`. Move-only; size 0 holds no allocation.
template <class Allocator>
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(std::size_t bytes)
      : p_(bytes == 0 ? nullptr : Allocator::allocate(bytes)), bytes_(bytes) {}
  ~Buffer() {
    if (p_ != nullptr)
      Allocator::release(p_);
  }
  Buffer(Buffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      Buffer old(std::move(*this)); // frees the old allocation on the way out
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const noexcept { return p_; }
  template <class T>
  T* as() const noexcept {
    return static_cast<T*>(p_);
  }
  std::size_t bytes() const noexcept { return bytes_; }
  // Grows (never shrinks) to at least `bytes`; the contents are not kept.
  void reserve(std::size_t bytes) {
    if (bytes > bytes_)
      *this = Buffer(bytes);
  }

private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

using DeviceBuffer = Buffer<DeviceAllocator>;
using PinnedBuffer = Buffer<PinnedAllocator>;

// Copies between any host/device pointers (the runtime infers the direction). copy() returns
// when the bytes have arrived, so work queued afterwards on any stream sees them.
TESSERA_CUDA_FN_OR(bytes == 0 ? void() : ::tessera::detail::cuda_not_compiled(__func__),
                   void copy(void* dst, const void* src, std::size_t bytes));
TESSERA_CUDA_FN_OR(bytes == 0 ? void() : ::tessera::detail::cuda_not_compiled(__func__),
                   void copy_async(CUstream_st* s, void* dst, const void* src, std::size_t bytes));
// 2-D copy: `height` rows of `width` bytes, rows `dpitch` / `spitch` bytes apart.
TESSERA_CUDA_FN(void copy_2d_async(CUstream_st* s, void* dst, std::size_t dpitch, const void* src,
                                   std::size_t spitch, std::size_t width, std::size_t height));
TESSERA_CUDA_FN(void memset_async(CUstream_st* s, void* dst, int byte, std::size_t bytes));

// True when `p` is device (or managed) memory that kernels on the current device can read.
TESSERA_CUDA_FN_OR(false, bool is_device_pointer(const void* p));
// True when `p` is page-locked host memory (cudaMallocHost or cudaHostRegister).
TESSERA_CUDA_FN_OR(false, bool is_pinned_host_pointer(const void* p));
// The address at which kernels on the current device reach the pinned host memory at `p`
// (the same address under unified addressing); null when `p` is not mapped into the device.
TESSERA_CUDA_FN_OR(nullptr, void* device_view_of_host(void* p));

} // namespace tessera::cuda
