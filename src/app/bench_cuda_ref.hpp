// The library baselines that `tessera bench --backend cuda` sets beside tessera's own kernels:
// cuBLAS geam (out-of-place transpose) and cub::DeviceReduce::Sum. Plain C++ declarations; the
// definitions are in bench_cuda_ref.cu, or in bench_cuda_ref_stub.cpp (throwing NotCompiled)
// when the build has no CUDA backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/dtype.hpp"

struct CUstream_st;

namespace tessera::app::cuda_ref {

// A cuBLAS handle whose work goes to one stream.
class Geam {
public:
  explicit Geam(CUstream_st* stream);
  ~Geam();
  Geam(const Geam&) = delete;
  Geam& operator=(const Geam&) = delete;

  // False when cuBLAS cannot take the shape (its dimensions are int).
  static bool supports(std::int64_t rows, std::int64_t cols) noexcept;
  // out (cols × rows, row-major) = in (rows × cols, row-major)ᵀ with alpha = 1, beta = 0;
  // device pointers; queued on the stream.
  void transpose(DType t, const void* in, void* out, std::int64_t rows, std::int64_t cols);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// cub::DeviceReduce::Sum of n elements of t (f32 or f64) into one element of t at `out`
// (device), with its temporary storage allocated once.
class CubSum {
public:
  CubSum(CUstream_st* stream, DType t, std::int64_t n);
  ~CubSum();
  CubSum(const CubSum&) = delete;
  CubSum& operator=(const CubSum&) = delete;

  void run(const void* in, void* out);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tessera::app::cuda_ref
