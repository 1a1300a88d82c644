// The distributed x-line kernels of the heat2d step (see heat2d_distributed.hpp): one thread per
// line, DistributedTridiag's operations in its order. Explicit intrinsics keep each operation
// rounded on its own, as on the CPU (the library builds with --fmad=false as well).
#include "cuda/heat2d_distributed.hpp"
#include "cuda/launch.cuh"

namespace tessera::cuda {

namespace {

using detail::i64;

constexpr int kThreads = 128;

__global__ void prepare_kernel(const DistributedLineFactors f, double* __restrict__ x,
                               double* __restrict__ rhs, bool add_first, bool add_last, double hg) {
  const i64 s = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  const i64 n = f.lines, L = f.points;
  if (s >= n)
    return;
  if (add_first)
    x[s] = __dadd_rn(x[s], hg);
  if (add_last)
    x[(L - 1) * n + s] = __dadd_rn(x[(L - 1) * n + s], hg);
  if (L >= 3) {
    // y on the interior rows, in place: forward, then backward.
    double prev = __dmul_rn(x[n + s], f.inv[1]);
    x[n + s] = prev;
    for (i64 m = 2; m <= L - 2; ++m) {
      prev = __dmul_rn(__dsub_rn(x[m * n + s], __dmul_rn(f.a[m], prev)), f.inv[m]);
      x[m * n + s] = prev;
    }
    const double y_last = prev; // y_{L-2}
    double next = prev;
    for (i64 m = L - 3; m >= 1; --m) {
      next = __dsub_rn(x[m * n + s], __dmul_rn(f.cp[m], next));
      x[m * n + s] = next;
    }
    const double y1 = next; // y_1 (y_{L-2} when L == 3)
    rhs[s] = __dsub_rn(x[s], __dmul_rn(f.c[0], y1));
    rhs[n + s] = __dsub_rn(x[(L - 1) * n + s], __dmul_rn(f.a[L - 1], y_last));
  } else if (L >= 1) {
    rhs[s] = x[s];
    if (L == 2)
      rhs[n + s] = x[n + s];
  }
}

// c + h * ((before + after) - 2 c), rounded step by step as on the CPU.
__device__ __forceinline__ double stencil(double c, double before, double after, double h) {
  return __dadd_rn(c, __dmul_rn(h, __dsub_rn(__dadd_rn(before, after), __dmul_rn(2.0, c))));
}

__global__ void finish_kernel(const DistributedLineFactors f, const double* __restrict__ x,
                              const double* __restrict__ ends, bool has_before, bool has_after,
                              double h, double g, double* __restrict__ v) {
  const i64 s = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  const i64 n = f.lines, L = f.points;
  if (s >= n || L < 1)
    return;
  const double first = ends[s];
  const double last = L >= 2 ? ends[n + s] : 0.0;
  // Point m of the solution: x_m = (y_m + f p_m) + l q_m inside, f and l at the ends.
  const auto point = [&](i64 m) {
    if (m == 0)
      return first;
    if (m == L - 1)
      return last;
    return __dadd_rn(__dadd_rn(x[m * n + s], __dmul_rn(first, f.p[m])), __dmul_rn(last, f.q[m]));
  };
  double before = has_before ? ends[2 * n + s] : g;
  const double after = has_after ? ends[3 * n + s] : g;
  double here = point(0);
  for (i64 m = 0; m < L; ++m) {
    const double next = m + 1 < L ? point(m + 1) : after;
    v[m * n + s] = stencil(here, before, next, h);
    before = here;
    here = next;
  }
}

unsigned blocks_for(i64 lines) {
  return static_cast<unsigned>((lines + kThreads - 1) / kThreads);
}

} // namespace

void distributed_lines_prepare(CUstream_st* stream, const DistributedLineFactors& f, double* x,
                               double* rhs, bool add_first, bool add_last, double hg) {
  if (f.lines == 0 || f.points == 0)
    return;
  prepare_kernel<<<blocks_for(f.lines), kThreads, 0, stream>>>(f, x, rhs, add_first, add_last, hg);
  CHECK_CUDA_LAUNCH();
}

void distributed_lines_finish(CUstream_st* stream, const DistributedLineFactors& f, const double* x,
                              const double* ends, bool has_before, bool has_after, double h,
                              double g, double* v) {
  if (f.lines == 0 || f.points == 0)
    return;
  finish_kernel<<<blocks_for(f.lines), kThreads, 0, stream>>>(f, x, ends, has_before, has_after, h,
                                                              g, v);
  CHECK_CUDA_LAUNCH();
}

} // namespace tessera::cuda
