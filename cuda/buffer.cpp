// Device and pinned host buffers, and copies.
#include "cuda/buffer.hpp"

#include <cuda_runtime.h>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"

namespace tessera::cuda {

namespace {

double gib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
}

} // namespace

void* DeviceAllocator::allocate(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free = 0, total = 0;
    cudaMemGetInfo(&free, &total);
    TESSERA_THROW(ResourceError,
                  "cannot allocate {:.3f} GiB of GPU memory ({:.3f} GiB free of {:.3f} GiB)",
                  gib(bytes), gib(free), gib(total));
  }
  CHECK_CUDA(e);
  return p;
}

void DeviceAllocator::release(void* p) noexcept {
  if (const cudaError_t e = cudaFree(p); e != cudaSuccess)
    log::warn("cudaFree failed: {}", cudaGetErrorString(e));
}

void* PinnedAllocator::allocate(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMallocHost(&p, bytes);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    TESSERA_THROW(ResourceError, "cannot allocate {:.3f} GiB of pinned host memory", gib(bytes));
  }
  CHECK_CUDA(e);
  return p;
}

void PinnedAllocator::release(void* p) noexcept {
  if (const cudaError_t e = cudaFreeHost(p); e != cudaSuccess)
    log::warn("cudaFreeHost failed: {}", cudaGetErrorString(e));
}

void copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0)
    return;
  // cudaMemcpy from pageable memory may return before the DMA lands, and tessera's kernels run on
  // non-blocking streams that do not wait for the legacy stream: wait for the copy itself.
  CHECK_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
  CHECK_CUDA(cudaStreamSynchronize(nullptr));
}

void copy_async(CUstream_st* s, void* dst, const void* src, std::size_t bytes) {
  if (bytes != 0)
    CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
}

void copy_2d_async(CUstream_st* s, void* dst, std::size_t dpitch, const void* src,
                   std::size_t spitch, std::size_t width, std::size_t height) {
  if (width != 0 && height != 0)
    CHECK_CUDA(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, cudaMemcpyDefault, s));
}

void memset_async(CUstream_st* s, void* dst, int byte, std::size_t bytes) {
  if (bytes != 0)
    CHECK_CUDA(cudaMemsetAsync(dst, byte, bytes, s));
}

namespace {
cudaMemoryType memory_type(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return cudaMemoryTypeUnregistered;
  }
  return a.type;
}
} // namespace

bool is_device_pointer(const void* p) {
  const cudaMemoryType t = memory_type(p);
  return t == cudaMemoryTypeDevice || t == cudaMemoryTypeManaged;
}

bool is_pinned_host_pointer(const void* p) {
  return memory_type(p) == cudaMemoryTypeHost;
}

void* device_view_of_host(void* p) {
  cudaPointerAttributes a{};
  if (p == nullptr || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return a.type == cudaMemoryTypeHost ? a.devicePointer : nullptr;
}

} // namespace tessera::cuda
