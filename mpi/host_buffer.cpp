#include "mpi/host_buffer.hpp"

#include <cstdlib>

#include "core/throw.hpp"

namespace tessera::mpi {

void HostBuffer::Free::operator()(void* p) const noexcept {
  std::free(p);
}

HostBuffer::HostBuffer(std::size_t bytes, const char* what) : bytes_(bytes) {
  if (bytes == 0)
    return;
  constexpr std::size_t kAlign = 64;
  const std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  data_.reset(std::aligned_alloc(kAlign, rounded));
  TESSERA_REQUIRE(data_ != nullptr, ResourceError, "cannot allocate {} bytes for the {}", bytes,
                  what);
  // Touch every page from the threads that will use it.
#pragma omp parallel for schedule(static)
  for (std::size_t off = 0; off < rounded; off += 4096)
    static_cast<unsigned char*>(data_.get())[off] = 0;
}

} // namespace tessera::mpi
