// Owning buffers of device memory and of pinned (page-locked) host memory, and the copies
// between them. Pinned buffers are what makes host<->device copies asynchronous: a copy from
// pageable memory blocks the host and cannot overlap a kernel.
#pragma once

#include <cstddef>
#include <utility>

struct CUstream_st;

namespace tessera::cuda {

// cudaMalloc'd bytes on the current device. Move-only; size 0 holds no allocation.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  // Throws ResourceError naming the size and the free device memory when allocation fails.
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const noexcept { return p_; }
  template <class T>
  T* as() const noexcept {
    return static_cast<T*>(p_);
  }
  std::size_t bytes() const noexcept { return bytes_; }
  // Grows (never shrinks) to at least `bytes`; the contents are not kept.
  void reserve(std::size_t bytes);

private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// cudaMallocHost'd page-locked host memory.
class PinnedBuffer {
public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const noexcept { return p_; }
  template <class T>
  T* as() const noexcept {
    return static_cast<T*>(p_);
  }
  std::size_t bytes() const noexcept { return bytes_; }
  void reserve(std::size_t bytes);

private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Copies between any host/device pointers (the runtime infers the direction). copy() returns
// when the bytes have arrived, so work queued afterwards on any stream sees them.
void copy(void* dst, const void* src, std::size_t bytes);
void copy_async(CUstream_st* s, void* dst, const void* src, std::size_t bytes);
// 2-D copy: `height` rows of `width` bytes, rows `dpitch` / `spitch` bytes apart.
void copy_2d_async(CUstream_st* s, void* dst, std::size_t dpitch, const void* src,
                   std::size_t spitch, std::size_t width, std::size_t height);
void memset_async(CUstream_st* s, void* dst, int byte, std::size_t bytes);

// True when `p` is device (or managed) memory that kernels on the current device can read.
bool is_device_pointer(const void* p);
// True when `p` is page-locked host memory (cudaMallocHost or cudaHostRegister).
bool is_pinned_host_pointer(const void* p);
// The address at which kernels on the current device reach the pinned host memory at `p`
// (the same address under unified addressing); null when `p` is not mapped into the device.
void* device_view_of_host(void* p);

} // namespace tessera::cuda
