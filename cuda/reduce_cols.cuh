// Column reductions in the canonical order of core/reduction.hpp: partials of 64-row groups,
// one thread per (group, column or 16-byte vector of columns), an ascending fold over the 64
// rows; then the groups folded in ascending order, a thread or (many groups, few columns) a
// warp per column. Every add is a separately rounded double add.
#pragma once

#include <cstdint>

#include "cuda/reduce_kernels.cuh"

namespace tessera::cuda::detail {

// x = the 16-byte vector that starts at element p of `a` (p + phase on a vector boundary);
// elements outside a's memory span [0, span) are not read (zero), and a vector that reaches
// outside the span is read element by element.
template <class T>
__device__ __forceinline__ void load_span_vec(const T* a, i64 p, i64 span, T* x) {
  constexpr int V = 16 / sizeof(T);
  if (p >= 0 && p + V <= span) {
    Vec16<T>::load(a + p, x);
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k)
      x[k] = p + k >= 0 && p + k < span ? __ldcs(a + p + k) : T(0);
  }
}

// x[r] = columns [j, j + V) of row i + r, for the R rows from i that lie below i1 (j a multiple
// of V; columns past the row's end hold other data or zero, which the caller drops).
// kAligned: every row starts on 16 bytes, and a vector is read whole when it lies inside the
// row. Otherwise (odd leading dimensions, offset blocks) the V columns are cut from the two
// aligned vectors that hold them, at the row's phase; inside the matrix's memory both vectors
// are read without checks, so the R rows' loads fly together, and only at the ends of the
// matrix are they checked.
template <class T, bool kAligned, int R>
__device__ __forceinline__ void load_group_rows(const T* __restrict__ a, i64 ld, i64 span,
                                                int phase, i64 i, i64 i1, i64 j, i64 cols,
                                                T (&x)[R][16 / sizeof(T)]) {
  constexpr int V = 16 / sizeof(T);
  if constexpr (kAligned) {
    const bool whole = j + V <= cols;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (i + r >= i1)
        continue;
      const T* src = a + (i + r) * ld + j;
      if (whole) {
        Vec16<T>::load(src, x[r]);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k)
          x[r][k] = j + k < cols ? __ldcs(src + k) : T(0);
      }
    }
    return;
  }
  const i64 last = min(i + R, i1) - 1;
  const bool inside = i * ld + j >= V && last * ld + j + 2 * V <= span;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (i + r >= i1)
      continue;
    const i64 off = (i + r) * ld + j;
    const int m = static_cast<int>((phase + off) & (V - 1));
    T lo[V], hi[V];
    if (inside) {
      Vec16<T>::load(a + off - m, lo);
      Vec16<T>::load(a + off - m + V, hi);
    } else {
      load_span_vec(a, off - m, span, lo);
      load_span_vec(a, off - m + V, span, hi);
    }
#pragma unroll
    for (int k = 0; k < V; ++k) {
      T v = lo[k];
#pragma unroll
      for (int s = 1; s < V; ++s)
        if (m == s)
          v = k + s < V ? lo[k + s] : hi[k + s - V];
      x[r][k] = v;
    }
  }
}

// Whether every row of a block starts on 16 bytes (load_group_rows<kAligned>).
template <class T>
inline bool rows_aligned(const T* a, i64 rows, i64 ld) {
  return aligned_to(a, 16) && (rows == 1 || ld % (16 / static_cast<i64>(sizeof(T))) == 0);
}

// Element 0 of `a` within its 16-byte vector.
template <class T>
__host__ __device__ inline int vec_phase(const T* a) {
  return static_cast<int>(reinterpret_cast<std::uintptr_t>(a) / sizeof(T) % (16 / sizeof(T)));
}

// Column partials of 64-row groups: one thread per (group, 16-byte vector of columns),
// consecutive threads along the columns of a group, then the next group, so that narrow
// matrices keep every thread busy too. `span`: elements from a[0] to one past the matrix's
// last; `phase`: vec_phase(a).
template <class T, Fn F, bool kAligned>
__global__ void __launch_bounds__(256)
    col_groups_kernel(const T* __restrict__ a, i64 rows, i64 cols, i64 ld, i64 span, int phase,
                      double* out) {
  using P = Policy<F>;
  constexpr int V = 16 / sizeof(T);
  constexpr int R = sizeof(T) == 8 ? 16 : 8; // rows in flight per thread
  const i64 groups = (rows + 63) / 64, ncv = (cols + V - 1) / V;
  for (i64 w = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; w < groups * ncv;
       w += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 g = w / ncv;
    const i64 j = (w - g * ncv) * V;
    const i64 i0 = g * 64, i1 = min(rows, i0 + 64);
    double p[V];
#pragma unroll
    for (int k = 0; k < V; ++k)
      p[k] = P::identity();
    for (i64 i = i0; i < i1; i += R) {
      T x[R][V];
      load_group_rows<T, kAligned, R>(a, ld, span, phase, i, i1, j, cols, x);
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (i + r < i1)
#pragma unroll
          for (int k = 0; k < V; ++k)
            p[k] = P::combine(p[k], P::f(static_cast<double>(x[r][k])));
    }
#pragma unroll
    for (int k = 0; k < V; ++k)
      if (j + k < cols)
        out[g * cols + j + k] = p[k];
  }
}

// acc[j] ⊕= f(a[i][j]) for i ascending: one thread per column.
template <class T, Fn F>
__global__ void fold_rows_kernel(const T* __restrict__ a, i64 rows, i64 cols, i64 ld, double* acc) {
  using P = Policy<F>;
  for (i64 j = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; j < cols;
       j += static_cast<i64>(gridDim.x) * blockDim.x) {
    double v = acc[j];
    for (i64 i = 0; i < rows; ++i)
      v = P::combine(v, P::f(static_cast<double>(a[i * ld + j])));
    acc[j] = v;
  }
}

// acc[j] = (accumulate ? acc[j] : identity) ⊕ groups[0][j] ⊕ … then finish.
template <Fn F>
__global__ void combine_groups_kernel(const double* __restrict__ groups, i64 ngroups, i64 cols,
                                      double* acc, bool accumulate, int finish_code, double count) {
  using P = Policy<F>;
  constexpr int R = 32; // partials in flight per thread: the fold is latency-bound otherwise
  for (i64 j = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; j < cols;
       j += static_cast<i64>(gridDim.x) * blockDim.x) {
    double v = accumulate ? acc[j] : P::identity();
    for (i64 g = 0; g < ngroups; g += R) {
      double x[R];
#pragma unroll
      for (int r = 0; r < R; ++r)
        x[r] = g + r < ngroups ? __ldcs(groups + (g + r) * cols + j) : 0.0;
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (g + r < ngroups)
          v = P::combine(v, x[r]);
    }
    acc[j] = finish(finish_code, v, count);
  }
}

// combine_groups_kernel for many groups and few columns: one warp per column (warp_fold), so
// the in-order fold of each column keeps loads in flight.
template <Fn F>
__global__ void __launch_bounds__(256)
    combine_groups_warp_kernel(const double* __restrict__ groups, i64 ngroups, i64 cols,
                               double* acc, bool accumulate, int finish_code, double count) {
  using P = Policy<F>;
  const int lane = threadIdx.x & 31;
  const i64 warps = static_cast<i64>(gridDim.x) * (blockDim.x / 32);
  for (i64 j = (static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; j < cols;
       j += warps) {
    const double init = accumulate ? acc[j] : P::identity();
    const double v = warp_fold<P, 8>(groups + j, ngroups, init, lane, cols);
    if (lane == 0)
      acc[j] = finish(finish_code, v, count);
  }
}

} // namespace tessera::cuda::detail
