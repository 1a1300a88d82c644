// The library and textbook baselines that `tessera bench --backend cuda` sets beside tessera's
// own kernels: cuBLAS geam (out-of-place transpose), the textbook 32×32 shared-memory tile
// transpose with 32×8 threads, and cub::DeviceReduce::Sum. Plain C++ declarations; the
// definitions are in reference.cu, or throw NotCompiled (core/backend_fn.hpp)
// when the build has no CUDA backend.
//
// cuBLAS is not linked: the first Geam loads libcublas.so.* with dlopen and resolves the few
// functions it uses, so that processes which never benchmark against it do not map it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/backend_fn.hpp"
#include "core/dtype.hpp"

struct CUstream_st;

namespace tessera::cuda::bench_ref {

// Empty when cuBLAS can be loaded; otherwise why not (the libraries tried, dlerror()).
TESSERA_CUDA_FN_OR("this build of tessera has no CUDA backend",
                   std::string cublas_unavailable_reason());

// A cuBLAS handle whose work goes to one stream. Throws CudaError when cuBLAS cannot be loaded.
class Geam {
public:
  TESSERA_CUDA_FN(explicit Geam(CUstream_st* stream));
  TESSERA_CUDA_FN_OR(, ~Geam());
  Geam(const Geam&) = delete;
  Geam& operator=(const Geam&) = delete;

  // False when cuBLAS cannot take the shape (its dimensions are int).
  TESSERA_CUDA_FN_OR(false, static bool supports(std::int64_t rows, std::int64_t cols) noexcept);
  // out (cols × rows, row-major) = in (rows × cols, row-major)ᵀ with alpha = 1, beta = 0;
  // device pointers; queued on the stream.
  TESSERA_CUDA_FN(void transpose(DType t, const void* in, void* out, std::int64_t rows,
                                 std::int64_t cols));

private:
  struct Impl;
  std::shared_ptr<Impl> impl_; // destroyed without Impl's definition (the stub build)
};

// The textbook transpose (32×32 tile of shared memory padded to 33 columns, 32×8 threads, each
// thread four elements, bounds checks on every access): out = inᵀ, contiguous rows, queued on
// the stream. False from tile_supports when the grid would exceed its y limit.
TESSERA_CUDA_FN_OR(false, bool tile_supports(std::int64_t rows, std::int64_t cols) noexcept);
TESSERA_CUDA_FN(void tile_transpose(CUstream_st* stream, DType t, const void* in, void* out,
                                    std::int64_t rows, std::int64_t cols));

// cub::DeviceReduce::Sum of n elements of t (f32 or f64) into one element of t at `out`
// (device), with its temporary storage allocated once.
class CubSum {
public:
  TESSERA_CUDA_FN(CubSum(CUstream_st* stream, DType t, std::int64_t n));
  TESSERA_CUDA_FN_OR(, ~CubSum());
  CubSum(const CubSum&) = delete;
  CubSum& operator=(const CubSum&) = delete;

  TESSERA_CUDA_FN(void run(const void* in, void* out));

private:
  struct Impl;
  std::shared_ptr<Impl> impl_; // destroyed without Impl's definition (the stub build)
};

} // namespace tessera::cuda::bench_ref
