// Host-resident matrices through the GPU in chunks on a stream pool: while chunk k is
// transposed, chunk k+1 is copied in and chunk k-1 copied out, each on its own stream, so the
// H2D copy, the kernel and the D2H copy overlap. Host memory must be pinned (PinnedBuffer or
// cudaHostRegister) for the copies to overlap; pageable memory works, but each copy then blocks.
//
// A transposed row panel is a column block of the output: cols rows of n elements, `rows`
// elements apart. By default (StagedOutput::Copy) it leaves the device as a 2-D copy. With
// StagedOutput::Direct, when the output is pinned host memory mapped into the device's address
// space, the kernel writes the panel straight into place over the link instead: no D2H copy and
// no device output panel. Measured on an H200 (bench/RESULTS.md), Direct overlaps better (total
// 1.10 x its slowest phase against 1.54) but is slower overall, because the kernel's writes
// cross the link at 42 GB/s where the 2-D copies run at 32 GB/s without overlapping the H2D
// copies and still finish sooner (51 ms against 56 ms for 1 GiB): so Copy is the default.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/backend_fn.hpp"
#include "core/dtype.hpp"
#include "cuda/buffer.hpp"
#include "cuda/stream.hpp"

namespace tessera::cuda {

// How transposed panels reach host memory.
enum class StagedOutput {
  Copy,  // the kernel fills a device panel; a 2-D D2H copy moves it into place
  Direct // the kernel writes into the mapped host output (InputError unless it is pinned)
};

// Seconds, from CUDA events.
struct StagedTimes {
  double total = 0.0;  // the whole pipelined run
  double h2d = 0.0;    // phase times measured alone (phases() only)
  double kernel = 0.0; // with Direct output: the kernel writing into host memory
  double d2h = 0.0;    // 0 with Direct output
  int chunks = 0;
  bool direct = false; // whether the panels were written into host memory by the kernel
};

class StagedTranspose {
public:
  // `chunk_bytes`: input bytes per chunk (row panels of the input, at least one row).
  TESSERA_CUDA_FN(explicit StagedTranspose(StreamPool& pool,
                                           std::size_t chunk_bytes = std::size_t{64} << 20,
                                           StagedOutput output = StagedOutput::Copy));

  // host_out (cols × rows) = host_in (rows × cols)ᵀ. Returns when the result is in host_out.
  TESSERA_CUDA_FN(StagedTimes run(DType t, const void* host_in, void* host_out, std::int64_t rows,
                                  std::int64_t cols));
  // The same chunks, each phase run alone over all chunks (every H2D, then every kernel, then
  // every D2H), for the ceiling that the pipelined run is compared with. Panels share the
  // per-stream slots, so host_out receives unspecified contents.
  TESSERA_CUDA_FN(StagedTimes phases(DType t, const void* host_in, void* host_out,
                                     std::int64_t rows, std::int64_t cols));

private:
  struct Plan {
    std::int64_t panel_rows, chunks;
    std::size_t elem;
    unsigned char* direct_out; // device view of host_out (Direct), else null
  };
  Plan prepare(DType t, void* host_out, std::int64_t rows, std::int64_t cols);
  void h2d(int slot, const Plan& p, const void* host_in, std::int64_t k, std::int64_t rows,
           std::int64_t cols, CUstream_st* s);
  void kernel(int slot, const Plan& p, DType t, std::int64_t k, std::int64_t rows,
              std::int64_t cols, CUstream_st* s);
  void d2h(int slot, const Plan& p, void* host_out, std::int64_t k, std::int64_t rows,
           std::int64_t cols, CUstream_st* s);

  StreamPool* pool_ = nullptr; // not a reference: the stub constructor has no initialiser list
  std::size_t chunk_bytes_;
  StagedOutput output_;
  DeviceBuffer in_, out_; // one input and one output panel per stream
  std::size_t slot_bytes_ = 0;
};

} // namespace tessera::cuda
