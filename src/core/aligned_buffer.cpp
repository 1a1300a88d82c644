#include "core/aligned_buffer.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/format_bytes.hpp"
#include "core/throw.hpp"

namespace tessera {

namespace {
std::size_t rounded(std::size_t bytes) noexcept {
  const std::size_t a = AlignedBuffer::kAlignment;
  return (std::max<std::size_t>(bytes, 1) + a - 1) / a * a;
}
} // namespace

AlignedBuffer::AlignedBuffer(std::size_t bytes, std::string_view what) : bytes_(bytes) {
  data_.reset(std::aligned_alloc(kAlignment, rounded(bytes)));
  TESSERA_REQUIRE(data_ != nullptr, ResourceError, "cannot allocate {} for {}",
                  format_bytes(double(bytes)), what);
}

void AlignedBuffer::touch_pages() noexcept {
  auto* p = as<unsigned char>();
  if (p == nullptr)
    return;
  const std::size_t n = rounded(bytes_);
#pragma omp parallel for schedule(static)
  for (std::size_t off = 0; off < n; off += 4096)
    p[off] = 0;
}

void AlignedBuffer::Free::operator()(void* p) const noexcept {
  std::free(p);
}

} // namespace tessera
