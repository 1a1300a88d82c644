// AlignedBuffer: small buffers 64-byte aligned, large ones (4 MiB and more) aligned to 2 MiB so
// that they can sit on transparent huge pages (the default; TESSERA_HUGE_PAGES=0 turns it off),
// and touch_pages() leaves the contents writable and the buffer whole.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/aligned_buffer.hpp"

namespace {

std::uintptr_t address(const tessera::AlignedBuffer& b) {
  return reinterpret_cast<std::uintptr_t>(b.data());
}

TEST(AlignedBuffer, SmallBuffersAreCacheLineAligned) {
  for (std::size_t bytes :
       {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{3} << 20}) {
    const tessera::AlignedBuffer b(bytes, "a test buffer");
    ASSERT_NE(b.data(), nullptr) << bytes;
    EXPECT_EQ(address(b) % tessera::AlignedBuffer::kAlignment, 0u) << bytes;
    EXPECT_EQ(b.size(), bytes);
  }
}

TEST(AlignedBuffer, LargeBuffersStartOnAHugePageUnlessTurnedOff) {
  const char* v = std::getenv("TESSERA_HUGE_PAGES");
  const bool off = v != nullptr && std::strcmp(v, "0") == 0;
  for (std::size_t bytes : {std::size_t{4} << 20, (std::size_t{9} << 20) + 17}) {
    tessera::AlignedBuffer b(bytes, "a test buffer");
    if (!off) {
      EXPECT_EQ(address(b) % (std::size_t{2} << 20), 0u) << bytes;
    }
    b.touch_pages();
    auto* p = b.as<unsigned char>();
    std::memset(p, 0xab, bytes);
    EXPECT_EQ(p[bytes - 1], 0xab);
  }
}

} // namespace
