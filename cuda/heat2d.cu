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

// c + h * ((before + after) - 2 c), rounded step by step as on the CPU.
__device__ __forceinline__ double stencil(double c, double before, double after, double h) {
  return __dadd_rn(c, __dmul_rn(h, __dsub_rn(__dadd_rn(before, after), __dmul_rn(2.0, c))));
}

__global__ void explicit_columns_kernel(const double* __restrict__ src, double* __restrict__ dst,
                                        i64 n, i64 m, double h, bool periodic, double g) {
  const i64 total = n * m;
  for (i64 k = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 i = k / m, s = k - i * m;
    const double before = i > 0 ? src[k - m] : (periodic ? src[(n - 1) * m + s] : g);
    const double after = i < n - 1 ? src[k + m] : (periodic ? src[s] : g);
    dst[k] = stencil(src[k], before, after, h);
  }
}

// r[k] = p[k * step] for k < count (walking the pointer keeps one address live, not kChunk).
template <int kChunk>
__device__ __forceinline__ void load_chunk(double (&r)[kChunk], const double* p, i64 step,
                                           i64 count) {
#pragma unroll
  for (int k = 0; k < kChunk; ++k) {
    if (k < count)
      r[k] = *p;
    p += step;
  }
}

// at(i, x[i * m]) for i = n - 2 down to 0, the values loaded kChunk ahead (load_chunk).
template <int kChunk, class At>
__device__ __forceinline__ void each_backward(const double* x, i64 m, i64 n, At&& at) {
  for (i64 i0 = n - 2; i0 >= 0; i0 -= kChunk) {
    double r[kChunk];
    load_chunk(r, x + i0 * m, -m, i0 + 1);
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      const i64 i = i0 - k;
      if (i >= 0)
        at(i, r[k]);
    }
  }
}

// One thread per line s: TridiagFactors::solve_line (same operations, same order; the
// library builds with --fmad=false) with AdiLine::solve's boundary terms before it and
// AdiLine's explicit half after it, computed from the solution values as they come out.
//
// kChunk values are loaded ahead of the sequential recurrences: the loads of a chunk do not
// depend on the recurrence, so they are all in flight at once. One thread per line gives few
// warps per multiprocessor (16384 lines: 4 on an H200), so these loads are what keeps enough
// bytes in flight to cover the memory latency; fewer lines need longer chunks (loads_ahead).
template <int kChunk>
__global__ void __launch_bounds__(64)
    solve_columns_kernel(double* __restrict__ x, double* __restrict__ out, i64 n, i64 m,
                         DeviceTridiag::Factors f, double h, double g, double hg, bool periodic,
                         bool add_bc, bool keep) {
  const i64 s = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x;
  if (s >= m)
    return;
  double* X = x + s;
  double* O = out + s;
  const double* __restrict__ inv = f.inv;
  const double* __restrict__ upper = f.upper;
  // Forward sweep (with the boundary terms: x[0] += hg, then x[n-1] += hg).
  double v = X[0];
  if (add_bc) {
    v = v + hg;
    if (n == 1)
      v = v + hg;
  }
  double prev = v * inv[0];
  X[0] = prev;
  for (i64 i0 = 1; i0 < n; i0 += kChunk) {
    double r[kChunk];
    load_chunk(r, X + i0 * m, m, n - i0);
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      const i64 i = i0 + k;
      if (i < n) {
        double rhs = r[k];
        if (add_bc && i == n - 1)
          rhs = rhs + hg;
        prev = (rhs - f.lower * prev) * inv[i];
        X[i * m] = prev;
      }
    }
  }
  if (!f.cyclic && periodic) {
    // A periodic line of 1 or 2 values: the factorization folds the wrap into the matrix
    // (TridiagFactors), and the explicit half wraps around both ends.
    const double wl = prev;
    const double w0 = n == 1 ? prev : X[0] - upper[0] * prev;
    if (keep)
      X[0] = w0;
    O[0] = stencil(w0, wl, n == 1 ? w0 : wl, h);
    if (n == 2)
      O[m] = stencil(wl, w0, w0, h);
    return;
  }
  if (!f.cyclic) {
    // Backward sweep; the explicit value at i + 1 is due once the solution at i is known.
    double cur = prev, right = g; // solution at i + 1, and at i + 2 (g past the end)
    each_backward<kChunk>(X, m, n, [&](i64 i, double ri) {
      const double left = ri - upper[i] * cur;
      if (keep)
        X[i * m] = left;
      O[(i + 1) * m] = stencil(cur, left, right, h);
      right = cur;
      cur = left;
    });
    O[0] = stencil(cur, g, right, h);
    return;
  }
  each_backward<kChunk>(X, m, n, [&](i64 i, double ri) {
    prev = ri - upper[i] * prev;
    X[i * m] = prev;
  });
  // The periodic correction x_i - fac z_i, then the explicit half (wrapping), in one pass.
  const double* __restrict__ z = f.z;
  const double fac = (prev + f.corner * X[(n - 1) * m]) * f.inv_correction;
  const double w0 = prev - fac * z[0];
  const double wl = n == 1 ? w0 : X[(n - 1) * m] - fac * z[n - 1];
  double before = wl, cur = w0;
  for (i64 i0 = 0; i0 < n; i0 += kChunk) {
    double r[kChunk];
    load_chunk(r, X + (i0 + 1) * m, m, n - 2 - i0);
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      const i64 i = i0 + k;
      if (i < n) {
        const double next = i + 1 < n - 1 ? r[k] - fac * z[i + 1] : (i + 1 == n - 1 ? wl : w0);
        if (keep)
          X[i * m] = cur;
        O[i * m] = stencil(cur, before, next, h);
        before = cur;
        cur = next;
      }
    }
  }
}

__global__ void sine_error_kernel(const double* __restrict__ u, double* __restrict__ err, i64 rows,
                                  i64 ny, const double* __restrict__ sx,
                                  const double* __restrict__ sy, double amp, double offset) {
  const i64 total = rows * ny;
  for (i64 k = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 r = k / ny, j = k - r * ny;
    const double ax = __dmul_rn(amp, sx[r]);
    err[k] = __dsub_rn(u[k], __dadd_rn(offset, __dmul_rn(ax, sy[j])));
  }
}

int blocks_for(i64 work, int threads) {
  const i64 wanted = (work + threads - 1) / threads;
  const i64 cap = static_cast<i64>(detail::sm_count()) * 32;
  return static_cast<int>(wanted < cap ? (wanted > 0 ? wanted : 1) : cap);
}

// Values each thread of solve_columns_kernel loads ahead: enough that each multiprocessor keeps
// about 32 KiB of loads in flight (Little's law: ~4.8 TB/s × ~0.8 µs over 132 SMs is ~29 KiB),
// i.e. warps per SM × loads × 256 bytes. 16 loads with 8 or more warps per SM, else 32 (more
// would spill registers; 16384 lines on an H200 are 4 warps per SM).
int loads_ahead(i64 lines) {
  const i64 warps = (lines + 31) / 32;
  const i64 sms = detail::sm_count();
  return (warps + sms - 1) / sms >= 8 ? 16 : 32;
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

void heat2d_explicit_columns(CUstream_st* stream, const double* src, double* dst, std::int64_t n,
                             std::int64_t lines, double h, bool periodic, double boundary) {
  TESSERA_CUDA_REQUIRE(n >= 0 && lines >= 0, "heat2d_explicit_columns: negative shape");
  if (n == 0 || lines == 0)
    return;
  constexpr int kThreads = 256;
  explicit_columns_kernel<<<blocks_for(n * lines, kThreads), kThreads, 0, stream>>>(
      src, dst, n, lines, h, periodic, boundary);
  CHECK_CUDA_LAUNCH();
}

void heat2d_solve_columns(CUstream_st* stream, const DeviceTridiag& tri, double* x,
                          double* explicit_out, std::int64_t lines, double h, bool periodic,
                          double boundary, bool keep_solution) {
  const std::int64_t n = tri.n();
  TESSERA_CUDA_REQUIRE(lines >= 0, "heat2d_solve_columns: negative shape");
  const DeviceTridiag::Factors f = tri.factors();
  TESSERA_CUDA_REQUIRE(!f.cyclic || periodic,
                       "heat2d_solve_columns: a periodic factorization for a Dirichlet line");
  if (n == 0 || lines == 0)
    return;
  // As AdiLine: the boundary terms only for a nonzero Dirichlet value (adding +0.0 would turn
  // -0.0 into +0.0), and hg rounded once on the host.
  const bool add_bc = !periodic && boundary != 0.0;
  const double g = periodic ? 0.0 : boundary;
  constexpr int kThreads = 64;
  const auto blocks = static_cast<unsigned>((lines + kThreads - 1) / kThreads);
  const auto launch = [&](auto kernel) {
    kernel<<<blocks, kThreads, 0, stream>>>(x, explicit_out, n, lines, f, h, g, h * boundary,
                                            periodic, add_bc, keep_solution);
  };
  if (loads_ahead(lines) == 16)
    launch(solve_columns_kernel<16>);
  else
    launch(solve_columns_kernel<32>);
  CHECK_CUDA_LAUNCH();
}

void heat2d_sine_error(CUstream_st* stream, const double* u, double* err, std::int64_t rows,
                       std::int64_t ny, const double* sx, const double* sy, double amp,
                       double offset) {
  TESSERA_CUDA_REQUIRE(rows >= 0 && ny >= 0, "heat2d_sine_error: negative shape");
  if (rows == 0 || ny == 0)
    return;
  constexpr int kThreads = 256;
  sine_error_kernel<<<blocks_for(rows * ny, kThreads), kThreads, 0, stream>>>(u, err, rows, ny, sx,
                                                                              sy, amp, offset);
  CHECK_CUDA_LAUNCH();
}

} // namespace tessera::cuda
