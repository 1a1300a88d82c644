// Host-resident matrices through the GPU. Two ways:
//
// Mapped (when both host buffers are pinned and mapped into the device's address space, as
// cudaMallocHost and cudaHostRegister memory is under unified addressing, and the shape is one
// that it moves faster: mapped_transpose_preferred): one kernel reads the input and writes the
// output over the link (cuda/transpose_mapped.hpp). Nothing to fill or drain, no device memory;
// on an H200, 1 GiB each way in about the time the GPU's own loads and stores take for the same
// bytes at once (bench/RESULTS.md).
//
// Staged (any other host memory, or on request): chunks on a stream pool; while chunk k is
// transposed, chunk k+1 is copied in and chunk k-1 copied out, each on its own stream, so the
// H2D copy, the kernel and the D2H copy overlap. Host memory must be pinned (PinnedBuffer or
// cudaHostRegister) for the copies to overlap; pageable memory works, but each copy then blocks.
//
// Chunks are tiles of the input of about chunk_bytes, square where the matrix allows. A copy
// between pinned host memory and the device moves whole 1-D runs fastest; the host side of
// each tile's copies is 2-D (one run per tile row on the way in, per tile column on the way
// out), and those copies run near the 1-D rate only when each run is long (on an H200: 48 GB/s
// with 16 KiB runs, 34 GB/s with 4 KiB, 28 GB/s with 1 KiB, against 55 GB/s for 1-D copies).
// Square tiles give both directions the same long runs, so both copies run at that rate and
// overlap each other (bench/RESULTS.md). With StagedOutput::Direct, when the output is pinned
// host memory mapped into the device's address space, the kernel writes each tile straight into
// place over the link instead: no D2H copy and no device output tile; on an H200 those writes
// do not overlap the H2D copies, so Copy is the staged default.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/backend_fn.hpp"
#include "core/dtype.hpp"
#include "cuda/buffer.hpp"
#include "cuda/stream.hpp"

namespace tessera::cuda {

// How the data crosses the link.
enum class StagedOutput {
  Auto,   // Mapped when both host buffers are pinned and mapped and the shape suits it; else Copy
  Copy,   // staged: the kernel fills a device tile; a 2-D D2H copy moves it into place
  Direct, // staged: the kernel writes into the mapped host output (InputError unless pinned)
  Mapped  // one kernel, mapped input to mapped output (InputError unless both are pinned)
};

// Seconds, from CUDA events.
struct StagedTimes {
  double total = 0.0;  // the whole pipelined run
  double h2d = 0.0;    // phase times measured alone (phases() only)
  double kernel = 0.0; // with Direct output: the kernel writing into host memory
  double d2h = 0.0;    // 0 with Direct output
  int chunks = 0;
  bool direct = false; // whether the tiles were written into host memory by the kernel
  bool mapped = false; // whether one kernel read and wrote host memory (no copies, no chunks)
};

class StagedTranspose {
public:
  static constexpr std::size_t kDefaultChunkBytes = std::size_t{256} << 20; // bench/RESULTS.md
  // `chunk_bytes`: input bytes per chunk (a tile of the input, at least one element).
  TESSERA_CUDA_FN(explicit StagedTranspose(StreamPool& pool,
                                           std::size_t chunk_bytes = kDefaultChunkBytes,
                                           StagedOutput output = StagedOutput::Auto));

  // host_out (cols × rows) = host_in (rows × cols)ᵀ. Returns when the result is in host_out.
  TESSERA_CUDA_FN(StagedTimes run(DType t, const void* host_in, void* host_out, std::int64_t rows,
                                  std::int64_t cols));
  // The same chunks, each phase run alone over all chunks (every H2D, then every kernel, then
  // every D2H), for the ceiling that the pipelined run is compared with. Tiles share the
  // per-stream slots, so host_out receives unspecified contents. A mapped run has one phase,
  // its kernel (`kernel`, and `total`).
  TESSERA_CUDA_FN(StagedTimes phases(DType t, const void* host_in, void* host_out,
                                     std::int64_t rows, std::int64_t cols));

private:
  struct Plan {
    std::int64_t rows, cols; // of the input
    std::int64_t tile_rows, tile_cols, tiles_x, chunks;
    std::size_t elem;
    unsigned char* direct_out; // device view of host_out (Direct), else null
    const void* mapped_in;     // device views of both (Mapped), else null
    void* mapped_out;
    // The counts of a run of this plan, before any time is measured.
    StagedTimes times() const {
      StagedTimes t;
      t.chunks = static_cast<int>(chunks);
      t.direct = direct_out != nullptr;
      t.mapped = mapped_in != nullptr;
      return t;
    }
  };
  struct Tile {
    std::int64_t r0, c0, nr, nc; // input rows [r0, r0 + nr), columns [c0, c0 + nc)
  };
  Plan prepare(DType t, const void* host_in, void* host_out, std::int64_t rows, std::int64_t cols);
  StagedTimes run_mapped(const Plan& p, DType t);
  static Tile tile(const Plan& p, std::int64_t k);
  int slot_of(std::int64_t k) const; // the stream and device slot of chunk k
  void h2d(int slot, const Plan& p, const void* host_in, const Tile& b, CUstream_st* s);
  void kernel(int slot, const Plan& p, DType t, const Tile& b, CUstream_st* s);
  void d2h(int slot, const Plan& p, void* host_out, const Tile& b, CUstream_st* s);

  StreamPool* pool_ = nullptr; // not a reference: the stub constructor has no initialiser list
  std::size_t chunk_bytes_;
  StagedOutput output_;
  DeviceBuffer in_, out_; // one input and one output tile per stream
  std::size_t slot_bytes_ = 0;
};

} // namespace tessera::cuda
