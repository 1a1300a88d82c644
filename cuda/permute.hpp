// The permutation of dimensions on the GPU, for arrays of rank 1 to 8 and elements of 1, 2, 4, 8
// or 16 bytes (bytes are moved, never interpreted): the CUDA counterpart of cpu::permute, with
// the same reduced form (core/permute_layout.hpp: lengths of 1 dropped, dimensions that stay
// together merged), then one launch for the whole array:
//  - nothing moves (the identity after merging): one device-to-device copy;
//  - the innermost dimension stays: coalesced copies of the rows, as words of up to 16 bytes;
//  - else a batch of 2-D transposes of the two dimensions that swap innermost, batched over the
//    others by index arithmetic: a single one goes to cuda::transpose (its choice table), a batch
//    to the same lean shared-memory tile kernel (transpose_lean_tile.cuh) with the batch along
//    the grid's y dimension; matrices narrower than 16 elements on a side, too small for tiles,
//    to an element-wise walk driven by the side whose innermost dimension is the shorter.
// 64-bit indices throughout. See cuda/permute_kernels.cuh and docs/performance.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/backend_fn.hpp"
#include "cuda/buffer.hpp"
#include "cuda/stream.hpp"

struct CUstream_st;

namespace tessera::cuda {

// out, of shape permuted_shape(shape, axes), row-major, receives in, of `shape`, row-major:
// output dimension k is input dimension axes[k]. Device pointers aligned to the element size
// (cudaMalloc'd memory is); the work is queued on `stream` (asynchronous). in and out must not
// overlap. InputError for a bad permutation, element size or pointer.
TESSERA_CUDA_FN(void permute(CUstream_st* stream, const void* in, void* out,
                             std::size_t element_size, std::span<const std::int64_t> shape,
                             std::span<const int> axes));

// Which kernel permute() launches for these arguments: "copy", "rows", "transpose" (one matrix,
// cuda::transpose), "tiles 64x64" (a batch; the tile shape), "walk" or "none".
TESSERA_CUDA_FN_OR("?", std::string permute_kernel(std::size_t element_size,
                                                   std::span<const std::int64_t> shape,
                                                   std::span<const int> axes));

// Host-resident arrays permuted on the current device: each run() copies the input in, permutes
// it and copies the result out, returning when host_out holds it. The device buffers and the
// stream are kept between runs (buffers grow as needed). Pinned host memory (PinnedBuffer) makes
// the copies faster; any host memory works.
class HostPermute {
public:
  TESSERA_CUDA_FN(HostPermute());
  TESSERA_CUDA_FN(void run(const void* host_in, void* host_out, std::size_t element_size,
                           std::span<const std::int64_t> shape, std::span<const int> axes));

private:
  unique_stream stream_;
  DeviceBuffer in_, out_;
};

} // namespace tessera::cuda
