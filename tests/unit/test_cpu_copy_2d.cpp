// Strided 2-D copies on the host against a plain loop: rows shorter and longer than the parts
// they are cut into, several copies at once, empty ones, and bytes outside the rows untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "cpu/copy_2d.hpp"

namespace {

struct Case {
  std::size_t width, height, src_pitch, dst_pitch;
};

TEST(Copy2d, MatchesAPlainLoop) {
  std::mt19937_64 rng(std::random_device{}());
  const std::vector<Case> cases = {{1, 1, 1, 1},
                                   {3, 7, 5, 11},
                                   {8, 1000, 8, 24},
                                   {0, 5, 4, 4},
                                   {9, 0, 9, 9},
                                   {(1 << 18) + 5, 3, (1 << 18) + 9, (1 << 19)},
                                   {(3 << 18), 2, (3 << 18), (3 << 18) + 1}};
  std::vector<std::vector<unsigned char>> src, dst, want;
  std::vector<tessera::cpu::Copy2d> copies;
  for (const Case& c : cases) {
    src.emplace_back(c.src_pitch * c.height + 1);
    for (auto& b : src.back())
      b = static_cast<unsigned char>(rng());
    dst.emplace_back(c.dst_pitch * c.height + 1, 0x5A);
    want.push_back(dst.back());
    for (std::size_t r = 0; r < c.height; ++r)
      for (std::size_t k = 0; k < c.width; ++k)
        want.back()[r * c.dst_pitch + k] = src.back()[r * c.src_pitch + k];
  }
  for (std::size_t i = 0; i < cases.size(); ++i)
    copies.push_back({src[i].data(), cases[i].src_pitch, dst[i].data(), cases[i].dst_pitch,
                      cases[i].width, cases[i].height});
  tessera::cpu::copy_2d(copies);
  for (std::size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(dst[i], want[i]) << "case " << i;
}

} // namespace
