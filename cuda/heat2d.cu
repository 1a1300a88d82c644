// The heat2d line kernels (see heat2d.hpp). Explicit intrinsics (__dadd_rn, __dmul_rn) keep nvcc
// from fusing multiply-adds, which the CPU build (-ffp-contract=off) does not do either.
#include "cuda/heat2d.hpp"
#include "cuda/launch.cuh"

namespace tessera::cuda {

namespace {

using detail::i64;

__global__ void explicit_kernel(const double* __restrict__ src, double* __restrict__ dst, i64 rows,
                                i64 n, double h, bool periodic, double g) {
  const i64 total = rows * n;
  for (i64 k = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 r = k / n, i = k - r * n;
    const double* u = src + r * n;
    const double before = i > 0 ? u[i - 1] : (periodic ? u[n - 1] : g);
    const double after = i < n - 1 ? u[i + 1] : (periodic ? u[0] : g);
    const double c = u[i];
    // c + h * ((before + after) - 2 c), rounded step by step as on the CPU.
    dst[k] = __dadd_rn(c, __dmul_rn(h, __dsub_rn(__dadd_rn(before, after), __dmul_rn(2.0, c))));
  }
}

__global__ void boundary_kernel(double* lines, i64 rows, i64 n, double hg) {
  for (i64 r = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<i64>(gridDim.x) * blockDim.x) {
    double* line = lines + r * n;
    line[0] = __dadd_rn(line[0], hg);
    line[n - 1] = __dadd_rn(line[n - 1], hg);
  }
}

int blocks_for(i64 work, int threads) {
  const i64 wanted = (work + threads - 1) / threads;
  const i64 cap = static_cast<i64>(detail::sm_count()) * 32;
  return static_cast<int>(wanted < cap ? (wanted > 0 ? wanted : 1) : cap);
}

} // namespace

void heat2d_explicit(CUstream_st* stream, const double* src, double* dst, std::int64_t rows,
                     std::int64_t n, double h, bool periodic, double boundary) {
  TESSERA_CUDA_REQUIRE(rows >= 0 && n >= 0, "heat2d_explicit: negative shape");
  if (rows == 0 || n == 0)
    return;
  constexpr int kThreads = 256;
  explicit_kernel<<<blocks_for(rows * n, kThreads), kThreads, 0, stream>>>(src, dst, rows, n, h,
                                                                           periodic, boundary);
  CHECK_CUDA_LAUNCH();
}

void heat2d_add_boundary(CUstream_st* stream, double* lines, std::int64_t rows, std::int64_t n,
                         double hg) {
  TESSERA_CUDA_REQUIRE(rows >= 0 && n >= 0, "heat2d_add_boundary: negative shape");
  if (rows == 0 || n == 0)
    return;
  constexpr int kThreads = 256;
  boundary_kernel<<<blocks_for(rows, kThreads), kThreads, 0, stream>>>(lines, rows, n, hg);
  CHECK_CUDA_LAUNCH();
}

} // namespace tessera::cuda
