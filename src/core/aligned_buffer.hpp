// 64-byte aligned, uninitialised host memory: matrix blocks, exchange staging, out-of-core
// chunks, benchmark buffers. Never a null pointer once allocated, even for 0 bytes (plans and
// kernels may insist on one).
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

namespace tessera {

class AlignedBuffer {
public:
  static constexpr std::size_t kAlignment = 64;

  AlignedBuffer() = default; // holds nothing: data() is null
  // Throws ResourceError "cannot allocate SIZE for WHAT" when the allocation fails.
  AlignedBuffer(std::size_t bytes, std::string_view what);

  void* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return bytes_; }
  template <class T>
  T* as() const noexcept {
    return static_cast<T*>(data());
  }

  // Writes one byte of every page from the OpenMP threads (static schedule), so that the pages
  // land near the threads that use them and a first timed use pays no page faults.
  void touch_pages() noexcept;

private:
  struct Free {
    void operator()(void* p) const noexcept;
  };
  std::unique_ptr<void, Free> data_;
  std::size_t bytes_ = 0;
};

} // namespace tessera
