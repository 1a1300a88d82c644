#include "core/aligned_buffer.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>

#include "core/format_bytes.hpp"
#include "core/settings.hpp"
#include "core/throw.hpp"

namespace tessera {

namespace {
std::size_t rounded(std::size_t bytes, std::size_t a) noexcept {
  return (std::max<std::size_t>(bytes, 1) + a - 1) / a * a;
}

// Buffers this large are aligned to, and advised onto, 2 MiB transparent huge pages
// (TESSERA_HUGE_PAGES=0 turns that off): on 4 KiB pages the first touches of fresh memory
// dominate whole jobs, as numpy avoids for arrays of 4 MiB and more. The measurements, and the
// shapes that ran less predictably on huge pages: docs/performance.md, "Huge pages for large
// buffers".
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kHugeFrom = std::size_t{4} << 20;

bool huge_pages_wanted() noexcept {
  static const bool wanted = [] {
    return settings::choice(settings::Setting::HugePages, 1) == 1;
  }();
  return wanted;
}
} // namespace

AlignedBuffer::AlignedBuffer(std::size_t bytes, std::string_view what) : bytes_(bytes) {
  const bool huge = bytes >= kHugeFrom && huge_pages_wanted();
  const std::size_t align = huge ? kHugePage : kAlignment;
  data_.reset(std::aligned_alloc(align, rounded(bytes, align)));
  TESSERA_REQUIRE(data_ != nullptr, ResourceError, "cannot allocate {} for {}",
                  format_bytes(double(bytes)), what);
#ifdef MADV_HUGEPAGE
  if (huge) // advice only: without transparent huge pages it fails and nothing changes
    (void)::madvise(data_.get(), rounded(bytes, align), MADV_HUGEPAGE);
#endif
}

void AlignedBuffer::touch_pages() noexcept {
  auto* p = as<unsigned char>();
  if (p == nullptr)
    return;
  const std::size_t n = rounded(bytes_, kAlignment);
#pragma omp parallel for schedule(static)
  for (std::size_t off = 0; off < n; off += 4096)
    p[off] = 0;
}

void AlignedBuffer::Free::operator()(void* p) const noexcept {
  std::free(p);
}

} // namespace tessera
