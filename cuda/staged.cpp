// The chunked host -> device -> host transpose pipeline.
#include "cuda/staged.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/throw.hpp"
#include "cuda/transpose.hpp"
#include "cuda/transpose_mapped.hpp"

namespace tessera::cuda {

StagedTranspose::StagedTranspose(StreamPool& pool, std::size_t chunk_bytes, StagedOutput output)
    : pool_(&pool), chunk_bytes_(std::max<std::size_t>(chunk_bytes, 1)), output_(output) {}

// Tiles of about chunk_bytes: square (the same number of bytes in both copies' row segments),
// or whole rows (columns) when the matrix is narrower (shorter) than a square tile.
StagedTranspose::Plan StagedTranspose::prepare(DType t, const void* host_in, void* host_out,
                                               std::int64_t rows, std::int64_t cols) {
  TESSERA_REQUIRE(rows >= 0 && cols >= 0, InputError, "staged transpose: negative shape {}x{}",
                  rows, cols);
  Plan p{};
  p.rows = rows;
  p.cols = cols;
  p.elem = dtype_size(t);
  const auto elems = static_cast<std::int64_t>(std::max<std::size_t>(chunk_bytes_ / p.elem, 1));
  const auto side = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::sqrt(elems)));
  const std::int64_t r = std::max<std::int64_t>(rows, 1), c = std::max<std::int64_t>(cols, 1);
  if (c <= side) {
    p.tile_cols = c;
    p.tile_rows = std::clamp<std::int64_t>(elems / c, 1, r);
  } else if (r <= side) {
    p.tile_rows = r;
    p.tile_cols = std::clamp<std::int64_t>(elems / r, 1, c);
  } else {
    p.tile_rows = side;
    p.tile_cols = side;
  }
  p.tiles_x = (c + p.tile_cols - 1) / p.tile_cols;
  p.chunks = rows == 0 || cols == 0 ? 0 : p.tiles_x * ((r + p.tile_rows - 1) / p.tile_rows);
  p.direct_out = nullptr;
  p.mapped_in = nullptr;
  p.mapped_out = nullptr;
  const bool mapped_wanted =
      output_ == StagedOutput::Mapped ||
      (output_ == StagedOutput::Auto && mapped_transpose_preferred(t, host_in, rows, cols, cols));
  if (mapped_wanted) {
    // const_cast: the device view of the input is only read.
    const void* in = device_view_of_host(const_cast<void*>(host_in));
    void* out = device_view_of_host(host_out);
    if (in != nullptr && out != nullptr && mapped_transpose_fits(t, in, out)) {
      p.mapped_in = in;
      p.mapped_out = out;
      p.chunks = p.chunks > 0 ? 1 : 0; // one launch
      return p;                        // no device tiles
    }
    TESSERA_REQUIRE(output_ != StagedOutput::Mapped || p.chunks == 0, InputError,
                    "staged transpose: mapped transfer needs both host buffers pinned, mapped "
                    "into the device and aligned to the element");
  }
  if (output_ == StagedOutput::Direct)
    p.direct_out = static_cast<unsigned char*>(device_view_of_host(host_out));
  TESSERA_REQUIRE(
      output_ != StagedOutput::Direct || p.direct_out != nullptr || p.chunks == 0, InputError,
      "staged transpose: direct output needs pinned host memory mapped into the device");
  const std::size_t slot = static_cast<std::size_t>(p.tile_rows * p.tile_cols) * p.elem;
  const std::size_t slots = static_cast<std::size_t>(pool_->size());
  if (slot > slot_bytes_ || !in_.data()) {
    in_ = DeviceBuffer(slot * slots);
    out_ = DeviceBuffer();
    slot_bytes_ = slot;
  }
  if (p.direct_out == nullptr && out_.bytes() < slot_bytes_ * slots)
    out_ = DeviceBuffer(slot_bytes_ * slots);
  return p;
}

StagedTranspose::Tile StagedTranspose::tile(const Plan& p, std::int64_t k) {
  Tile b{};
  b.r0 = k / p.tiles_x * p.tile_rows;
  b.c0 = k % p.tiles_x * p.tile_cols;
  b.nr = std::min(p.tile_rows, p.rows - b.r0);
  b.nc = std::min(p.tile_cols, p.cols - b.c0);
  return b;
}

int StagedTranspose::slot_of(std::int64_t k) const {
  return static_cast<int>(k % pool_->size());
}

void StagedTranspose::h2d(int slot, const Plan& p, const void* host_in, const Tile& b,
                          CUstream_st* s) {
  const std::int64_t cols = p.cols;
  const auto* src = static_cast<const unsigned char*>(host_in) + (b.r0 * cols + b.c0) * p.elem;
  copy_2d_async(s, static_cast<unsigned char*>(in_.data()) + slot * slot_bytes_, b.nc * p.elem, src,
                cols * p.elem, b.nc * p.elem, static_cast<std::size_t>(b.nr));
}

void StagedTranspose::kernel(int slot, const Plan& p, DType t, const Tile& b, CUstream_st* s) {
  const std::int64_t rows = p.rows;
  const auto* src = static_cast<const unsigned char*>(in_.data()) + slot * slot_bytes_;
  if (p.direct_out != nullptr) // the tile's place in the output, over the link
    transpose(s, t, src, p.direct_out + (b.c0 * rows + b.r0) * p.elem, b.nr, b.nc, b.nc, rows);
  else
    transpose(s, t, src, static_cast<unsigned char*>(out_.data()) + slot * slot_bytes_, b.nr, b.nc,
              b.nc, b.nr);
}

void StagedTranspose::d2h(int slot, const Plan& p, void* host_out, const Tile& b, CUstream_st* s) {
  // The tile's transpose is nc × nr; it lands in rows [c0, c0 + nc), columns [r0, r0 + nr).
  if (p.direct_out != nullptr)
    return; // the kernel wrote it there
  copy_2d_async(s, static_cast<unsigned char*>(host_out) + (b.c0 * p.rows + b.r0) * p.elem,
                p.rows * p.elem, static_cast<unsigned char*>(out_.data()) + slot * slot_bytes_,
                b.nr * p.elem, b.nr * p.elem, static_cast<std::size_t>(b.nc));
}

StagedTimes StagedTranspose::run_mapped(const Plan& p, DType t) {
  StagedTimes times = p.times();
  CUstream_st* s = (*pool_)[0];
  Event start, stop;
  start.record(s);
  transpose_mapped(s, t, p.mapped_in, p.mapped_out, p.rows, p.cols, p.cols, p.rows);
  stop.record(s);
  stop.synchronize();
  times.total = times.kernel = Event::elapsed_ms(start, stop) * 1e-3;
  return times;
}

StagedTimes StagedTranspose::run(DType t, const void* host_in, void* host_out, std::int64_t rows,
                                 std::int64_t cols) {
  const Plan p = prepare(t, host_in, host_out, rows, cols);
  if (p.mapped_in != nullptr)
    return run_mapped(p, t);
  StagedTimes times = p.times();
  Event start, stop;
  start.record((*pool_)[0]);
  // Every stream starts after `start`, so the total covers the whole pipeline.
  for (int i = 1; i < pool_->size(); ++i)
    start.wait_on((*pool_)[i]);
  for (std::int64_t k = 0; k < p.chunks; ++k) {
    const int slot = slot_of(k);
    const Tile b = tile(p, k);
    CUstream_st* s = (*pool_)[slot];
    h2d(slot, p, host_in, b, s);
    kernel(slot, p, t, b, s);
    d2h(slot, p, host_out, b, s);
  }
  std::vector<Event> done(static_cast<std::size_t>(pool_->size()));
  for (int i = 1; i < pool_->size(); ++i) {
    done[i].record((*pool_)[i]);
    done[i].wait_on((*pool_)[0]);
  }
  stop.record((*pool_)[0]);
  stop.synchronize();
  times.total = Event::elapsed_ms(start, stop) * 1e-3;
  return times;
}

StagedTimes StagedTranspose::phases(DType t, const void* host_in, void* host_out, std::int64_t rows,
                                    std::int64_t cols) {
  const Plan p = prepare(t, host_in, host_out, rows, cols);
  if (p.mapped_in != nullptr)
    return run_mapped(p, t);
  StagedTimes times = p.times();
  CUstream_st* s = (*pool_)[0];
  Event e0, e1, e2, e3;
  // One slot per chunk would need the whole matrix on the device: each phase reuses the slots,
  // which is the same traffic and the same kernel work.
  e0.record(s);
  for (std::int64_t k = 0; k < p.chunks; ++k)
    h2d(slot_of(k), p, host_in, tile(p, k), s);
  e1.record(s);
  for (std::int64_t k = 0; k < p.chunks; ++k)
    kernel(slot_of(k), p, t, tile(p, k), s);
  e2.record(s);
  for (std::int64_t k = 0; k < p.chunks; ++k)
    d2h(slot_of(k), p, host_out, tile(p, k), s);
  e3.record(s);
  e3.synchronize();
  times.h2d = Event::elapsed_ms(e0, e1) * 1e-3;
  times.kernel = Event::elapsed_ms(e1, e2) * 1e-3;
  times.d2h = Event::elapsed_ms(e2, e3) * 1e-3;
  times.total = times.h2d + times.kernel + times.d2h;
  return times;
}

} // namespace tessera::cuda
