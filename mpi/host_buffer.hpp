// A 64-byte aligned host buffer for exchange staging, with its pages touched up front so that
// the first execute of a plan does not pay (and time) the page faults.
#pragma once

#include <cstddef>
#include <memory>

namespace tessera::mpi {

class HostBuffer {
public:
  HostBuffer() = default;
  // Throws ResourceError naming `what` and the size when the allocation fails.
  HostBuffer(std::size_t bytes, const char* what);

  void* data() noexcept { return data_.get(); }
  const void* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return bytes_; }

private:
  struct Free {
    void operator()(void* p) const noexcept;
  };
  std::unique_ptr<void, Free> data_;
  std::size_t bytes_ = 0;
};

} // namespace tessera::mpi
