// Batched tridiagonal kernels: one thread per system, replaying src/cpu/tridiag.cpp's
// operations in the same order (separately rounded: the library builds with --fmad=false).
#include "core/tridiag_factors.hpp"
#include "cuda/launch.cuh"
#include "cuda/tridiag.hpp"

namespace tessera::cuda {

namespace detail {
namespace {

struct Sys {
  i64 n, count, ss, es;
};

__global__ void thomas_kernel(const double* a, const double* b, const double* c, double* d, Sys L,
                              double* cp) {
  for (i64 s = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; s < L.count;
       s += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 o = s * L.ss, es = L.es, n = L.n;
    double m = 1.0 / b[o];
    double cprev = c[o] * m;
    double dprev = d[o] * m;
    cp[s] = cprev;
    d[o] = dprev;
    for (i64 i = 1; i < n; ++i) {
      const i64 e = o + i * es;
      m = 1.0 / (b[e] - a[e] * cprev);
      cprev = c[e] * m;
      dprev = (d[e] - a[e] * dprev) * m;
      cp[i * L.count + s] = cprev;
      d[e] = dprev;
    }
    for (i64 i = n - 2; i >= 0; --i) {
      const i64 e = o + i * es;
      dprev = d[e] - cp[i * L.count + s] * dprev;
      d[e] = dprev;
    }
  }
}

// cyclic_one / cyclic_small of src/cpu/tridiag.cpp. Scratch (interleaved by system): cp, inv, z.
__global__ void cyclic_kernel(const double* a, const double* b, const double* c, double* d, Sys L,
                              double* scratch) {
  for (i64 s = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; s < L.count;
       s += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 o = s * L.ss, es = L.es, n = L.n, cnt = L.count;
    auto A = [&](i64 i) { return a[o + i * es]; };
    auto B = [&](i64 i) { return b[o + i * es]; };
    auto C = [&](i64 i) { return c[o + i * es]; };
    double* D = d + o;
    if (n == 1) {
      D[0] = D[0] / (A(0) + B(0) + C(0));
      continue;
    }
    if (n == 2) {
      const double up = A(0) + C(0), lo = A(1) + C(1);
      const double m0 = 1.0 / B(0);
      const double cp0 = up * m0;
      const double y0 = D[0] * m0;
      const double y1 = (D[es] - lo * y0) / (B(1) - lo * cp0);
      D[0] = y0 - cp0 * y1;
      D[es] = y1;
      continue;
    }
    double* cp = scratch + s;
    double* inv = scratch + n * cnt + s;
    double* z = scratch + 2 * n * cnt + s;
    const double beta = A(0), alpha = C(n - 1), gamma = -B(0);
    auto diag = [&](i64 i) {
      if (i == 0)
        return B(0) - gamma;
      if (i == n - 1)
        return B(n - 1) - alpha * beta / gamma;
      return B(i);
    };
    inv[0] = 1.0 / diag(0);
    cp[0] = C(0) * inv[0];
    for (i64 i = 1; i < n; ++i) {
      inv[i * cnt] = 1.0 / (diag(i) - A(i) * cp[(i - 1) * cnt]);
      cp[i * cnt] = C(i) * inv[i * cnt];
    }
    auto sweep = [&](double* x, i64 xs) {
      x[0] = x[0] * inv[0];
      for (i64 i = 1; i < n; ++i)
        x[i * xs] = (x[i * xs] - A(i) * x[(i - 1) * xs]) * inv[i * cnt];
      for (i64 i = n - 2; i >= 0; --i)
        x[i * xs] = x[i * xs] - cp[i * cnt] * x[(i + 1) * xs];
    };
    for (i64 i = 0; i < n; ++i)
      z[i * cnt] = 0.0;
    z[0] = gamma;
    z[(n - 1) * cnt] = alpha;
    sweep(z, cnt);
    sweep(D, es);
    const double f =
        (D[0] + beta * D[(n - 1) * es] / gamma) / (1.0 + z[0] + beta * z[(n - 1) * cnt] / gamma);
    for (i64 i = 0; i < n; ++i)
      D[i * es] = D[i * es] - f * z[i * cnt];
  }
}

// const_sweep of src/cpu/tridiag.cpp for one system per thread.
__global__ void const_kernel(double* x, Sys L, double lower, const double* __restrict__ upper,
                             const double* __restrict__ inv, const double* __restrict__ z,
                             double corner, double invc, bool cyclic) {
  for (i64 s = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; s < L.count;
       s += static_cast<i64>(gridDim.x) * blockDim.x) {
    double* X = x + s * L.ss;
    const i64 es = L.es, n = L.n;
    double prev = X[0] * inv[0];
    X[0] = prev;
    for (i64 i = 1; i < n; ++i) {
      prev = (X[i * es] - lower * prev) * inv[i];
      X[i * es] = prev;
    }
    for (i64 i = n - 2; i >= 0; --i) {
      prev = X[i * es] - upper[i] * prev;
      X[i * es] = prev;
    }
    if (!cyclic)
      continue;
    const double fac = (X[0] + corner * X[(n - 1) * es]) * invc;
    for (i64 i = 0; i < n; ++i)
      X[i * es] = X[i * es] - fac * z[i];
  }
}

Sys check(const BatchLayout& L, const char* what) {
  TESSERA_CUDA_REQUIRE(L.n >= 0 && L.count >= 0,
                       std::string("cuda::") + what + ": n and count must not be negative");
  return {L.n, L.count, L.system_stride, L.element_stride};
}

unsigned grid_for(i64 count) {
  return static_cast<unsigned>(std::max<i64>(1, std::min<i64>((count + 127) / 128, 1 << 20)));
}

} // namespace
} // namespace detail

void thomas_batched(CUstream_st* stream, const double* a, const double* b, const double* c,
                    double* d, const BatchLayout& layout, DeviceBuffer& scratch) {
  const detail::Sys L = detail::check(layout, "thomas_batched");
  if (L.n == 0 || L.count == 0)
    return;
  scratch.reserve(sizeof(double) * static_cast<std::size_t>(L.n * L.count));
  detail::thomas_kernel<<<detail::grid_for(L.count), 128, 0, stream>>>(a, b, c, d, L,
                                                                       scratch.as<double>());
  CHECK_CUDA_LAUNCH();
}

void cyclic_batched(CUstream_st* stream, const double* a, const double* b, const double* c,
                    double* d, const BatchLayout& layout, DeviceBuffer& scratch) {
  const detail::Sys L = detail::check(layout, "cyclic_batched");
  if (L.n == 0 || L.count == 0)
    return;
  scratch.reserve(3 * sizeof(double) * static_cast<std::size_t>(L.n * L.count));
  detail::cyclic_kernel<<<detail::grid_for(L.count), 128, 0, stream>>>(a, b, c, d, L,
                                                                       scratch.as<double>());
  CHECK_CUDA_LAUNCH();
}

DeviceTridiag::DeviceTridiag(const TridiagFactors& f)
    : n_(f.n()), cyclic_(f.cyclic()), lower_(f.lower()), corner_(f.corner()),
      inv_correction_(f.inv_correction()),
      arrays_(3 * sizeof(double) * static_cast<std::size_t>(f.n())) {
  const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(n_);
  double* base = arrays_.as<double>();
  copy(base, f.upper().data(), bytes);
  copy(base + n_, f.inv().data(), bytes);
  if (cyclic_)
    copy(base + 2 * n_, f.z().data(), bytes);
}

void DeviceTridiag::solve(CUstream_st* stream, double* x, const BatchLayout& layout) const {
  const detail::Sys L = detail::check(layout, "DeviceTridiag::solve");
  TESSERA_CUDA_REQUIRE(L.n == n_, "tridiagonal batch has systems of " + std::to_string(L.n) +
                                      " unknowns, the factorization " + std::to_string(n_));
  if (L.n == 0 || L.count == 0)
    return;
  const double* base = arrays_.as<double>();
  detail::const_kernel<<<detail::grid_for(L.count), 128, 0, stream>>>(
      x, L, lower_, base, base + n_, base + 2 * n_, corner_, inv_correction_, cyclic_);
  CHECK_CUDA_LAUNCH();
}

} // namespace tessera::cuda
