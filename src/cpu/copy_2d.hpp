// Strided 2-D copies of bytes on the host, several at once over the OpenMP threads: the host
// counterpart of cuda::copy_2d_async, for placing received pieces into a block.
#pragma once

#include <cstddef>
#include <span>

namespace tessera::cpu {

// `height` rows of `width` bytes; row i is read at src + i·src_pitch, written at
// dst + i·dst_pitch.
struct Copy2d {
  const void* src = nullptr;
  std::size_t src_pitch = 0;
  void* dst = nullptr;
  std::size_t dst_pitch = 0;
  std::size_t width = 0, height = 0;
};

// Runs every copy (they must not overlap each other's destinations), opening its own OpenMP
// parallel region. Rows are cut into parts of a few hundred KiB, so that a few long rows keep
// every thread busy as well as many short ones.
void copy_2d(std::span<const Copy2d> copies);

} // namespace tessera::cpu
