// Column reductions in the canonical order of core/reduction.hpp: partials of 64-row groups,
// one thread per (group, column or 16-byte vector of columns), an ascending fold over the 64
// rows; then the groups of each super-block folded in ascending order, a thread per (super-block,
// column); then the super-blocks, a thread or (many super-blocks, few columns) a warp per column.
// Every add is a separately rounded double add.
#pragma once

#include "cuda/reduce_kernels.cuh"

namespace tessera::cuda::detail {

// Columns per thread of the column-group kernels: a 16-byte vector where every row starts on
// 16 bytes (kVec), else one.
template <class T, bool kVec>
constexpr int group_cols() {
  return kVec ? 16 / static_cast<int>(sizeof(T)) : 1;
}

// x[r] = columns [j, j + V) of row i + r, for the R rows from i that lie below i1 (columns
// past the row's end read as zero, and the caller drops them). With kVec a vector that lies
// inside the row is read whole. Rows that do not start on 16 bytes are read one element per
// thread: cutting each row's columns out of the two aligned vectors that hold them was
// measured slower on an H200 (f32 and f64, one op or several).
template <class T, bool kVec, int R>
__device__ __forceinline__ void load_group_rows(const T* __restrict__ a, i64 ld, i64 i, i64 i1,
                                                i64 j, i64 cols, T (&x)[R][group_cols<T, kVec>()]) {
  constexpr int V = group_cols<T, kVec>();
  const bool whole = j + V <= cols;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (i + r >= i1)
      continue;
    const T* src = a + (i + r) * ld + j;
    if (kVec && whole) {
      Vec16<T>::load(src, x[r]);
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k)
        x[r][k] = j + k < cols ? __ldcs(src + k) : T(0);
    }
  }
}

// The walk of the column-group kernels: one item per (64-row group g, first column j of
// group_cols columns), consecutive threads along the columns of a group, then the next group,
// so that narrow matrices keep every thread busy too. item(g, j, rows) is called once per item
// of this thread; rows(each_row) then calls each_row(x) with the item's columns of every row of
// the group in ascending order (R rows in flight).
template <class T, bool kVec, int R, class Item>
__device__ __forceinline__ void each_col_group(const T* __restrict__ a, i64 rows, i64 cols, i64 ld,
                                               Item&& item) {
  constexpr int V = group_cols<T, kVec>();
  const i64 groups = (rows + 63) / 64, ncv = (cols + V - 1) / V;
  for (i64 w = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; w < groups * ncv;
       w += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 g = w / ncv;
    const i64 j = (w - g * ncv) * V;
    const i64 i0 = g * 64, i1 = min(rows, i0 + 64);
    item(g, j, [&](auto&& each_row) {
      for (i64 i = i0; i < i1; i += R) {
        T x[R][V];
        load_group_rows<T, kVec, R>(a, ld, i, i1, j, cols, x);
#pragma unroll
        for (int r = 0; r < R; ++r)
          if (i + r < i1)
            each_row(x[r]);
      }
    });
  }
}

// Whether every row of a block starts on 16 bytes (the kVec kernels).
template <class T>
inline bool rows_aligned(const T* a, i64 rows, i64 ld) {
  return aligned_to(a, 16) && (rows == 1 || ld % (16 / static_cast<i64>(sizeof(T))) == 0);
}

// Rows in flight per thread of col_groups_kernel: 16 for f64 vectors, else 8, or 16 where the
// matrix gives fewer items than the device holds threads at once (`few`: then the threads
// alone keep too few bytes in flight; 2048² f32 has 16384 items of 16 bytes).
template <class T, bool kVec, bool kFew>
constexpr int col_group_rows() {
  return (kVec && sizeof(T) == 8) || kFew ? 16 : 8;
}

// Column partials of 64-row groups (each_col_group).
template <class T, Fn F, bool kVec, bool kFew = false>
__global__ void __launch_bounds__(256)
    col_groups_kernel(const T* __restrict__ a, i64 rows, i64 cols, i64 ld, double* out) {
  using P = Policy<F>;
  constexpr int V = group_cols<T, kVec>();
  constexpr int R = col_group_rows<T, kVec, kFew>();
  each_col_group<T, kVec, R>(a, rows, cols, ld, [&](i64 g, i64 j, auto&& group_rows) {
    double p[V];
#pragma unroll
    for (int k = 0; k < V; ++k)
      p[k] = P::identity();
    group_rows([&](const T(&x)[V]) {
#pragma unroll
      for (int k = 0; k < V; ++k)
        p[k] = P::combine(p[k], P::f(static_cast<double>(x[k])));
    });
#pragma unroll
    for (int k = 0; k < V; ++k)
      if (j + k < cols)
        out[g * cols + j + k] = p[k];
  });
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

// acc[j] = (accumulate ? acc[j] : identity) ⊕ groups[0][j] ⊕ … then finish; in batches of
// `run` groups (the super-blocks of the canonical order): batch y folds groups
// [y·run, (y+1)·run) into acc + y·cols, y along the grid's second dimension.
template <Fn F>
__global__ void combine_groups_kernel(const double* __restrict__ groups, i64 ngroups, i64 cols,
                                      double* acc, bool accumulate, int finish_code, double count,
                                      i64 run) {
  using P = Policy<F>;
  // Partials in flight per thread: the fold is latency-bound otherwise. The next R are loaded
  // before the current R are added.
  constexpr int R = 32;
  for (i64 y = blockIdx.y; y * run < ngroups; y += gridDim.y) {
    const double* batch = groups + y * run * cols;
    const i64 n = min(run, ngroups - y * run);
    double* out = acc + y * cols;
    const auto load = [&](i64 g, i64 j, double(&x)[R]) {
#pragma unroll
      for (int r = 0; r < R; ++r)
        x[r] = g + r < n ? __ldcs(batch + (g + r) * cols + j) : 0.0;
    };
    for (i64 j = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; j < cols;
         j += static_cast<i64>(gridDim.x) * blockDim.x) {
      double v = accumulate ? out[j] : P::identity();
      double x[R];
      load(0, j, x);
      for (i64 g = 0; g < n; g += R) {
        double next[R];
        load(g + R, j, next);
#pragma unroll
        for (int r = 0; r < R; ++r)
          if (g + r < n)
            v = P::combine(v, x[r]);
#pragma unroll
        for (int r = 0; r < R; ++r)
          x[r] = next[r];
      }
      out[j] = finish(finish_code, v, count);
    }
  }
}

// combine_groups_kernel for many groups and few columns, in one batch: one warp per column
// (warp_fold_staged), so the in-order fold of each column keeps loads in flight, 16 partials per
// lane (few warps run: a matrix of 10⁸ rows and 17 columns has 17 columns of 24415
// super-blocks). One warp a block, so that with few columns each fold has an SM to itself
// (eight warps a block put the folds of 17 columns on three SMs and ran at half the speed).
template <Fn F>
__global__ void __launch_bounds__(32)
    combine_groups_warp_kernel(const double* __restrict__ groups, i64 ngroups, i64 cols,
                               double* acc, bool accumulate, int finish_code, double count) {
  using P = Policy<F>;
  constexpr int Q = 16;
  __shared__ double buf[32 * Q];
  const int lane = static_cast<int>(threadIdx.x);
  for (i64 j = blockIdx.x; j < cols; j += gridDim.x) {
    const double init = accumulate ? acc[j] : P::identity();
    const double v = warp_fold_staged<P, Q>(groups + j, ngroups, init, lane, buf, cols);
    if (lane == 0)
      acc[j] = finish(finish_code, v, count);
  }
}

} // namespace tessera::cuda::detail
