// Fused reductions: several ops in one pass over the data, each in the canonical order of
// core/reduction.hpp (the same bits as one pass per op). `mask` is a set of Fn bits; the raw
// values of the k-th op of the mask (in Fn order) go to slot k: rowvals[k*stride + i] (row
// values) or out[k*stride + g*cols + j] (column partials of 64-row groups).
#pragma once

#include "cuda/reduce_cols.cuh"

namespace tessera::cuda::detail {

__host__ __device__ constexpr unsigned fn_bit(Fn f) {
  return 1u << static_cast<int>(f);
}

// Slot of F among the ops of mask.
__device__ __forceinline__ int fn_slot(unsigned mask, Fn f) {
  return __popc(mask & (fn_bit(f) - 1u));
}

// g(integral_constant<Fn, F>) for each F in mask (uniform branches: mask is a kernel argument).
template <class G>
__device__ __forceinline__ void each_fn(unsigned mask, G&& g) {
  if (mask & fn_bit(Fn::Sum))
    g(std::integral_constant<Fn, Fn::Sum>{});
  if (mask & fn_bit(Fn::Abs))
    g(std::integral_constant<Fn, Fn::Abs>{});
  if (mask & fn_bit(Fn::Sq))
    g(std::integral_constant<Fn, Fn::Sq>{});
  if (mask & fn_bit(Fn::Min))
    g(std::integral_constant<Fn, Fn::Min>{});
  if (mask & fn_bit(Fn::Max))
    g(std::integral_constant<Fn, Fn::Max>{});
  if (mask & fn_bit(Fn::AbsMax))
    g(std::integral_constant<Fn, Fn::AbsMax>{});
}

// The lane accumulators of every op of the mask: the Sum family in double, Min, Max and
// NormInf in the data's type T (see Policy).
template <class T>
struct FusedAcc {
  unsigned mask;
  LaneAcc<Policy<Fn::Sum>> sum;
  LaneAcc<Policy<Fn::Abs>> abs;
  LaneAcc<Policy<Fn::Sq>> sq;
  LaneAcc<Policy<Fn::Min>, T> mn;
  LaneAcc<Policy<Fn::Max>, T> mx;
  LaneAcc<Policy<Fn::AbsMax>, T> amx;

  template <Fn F>
  __device__ __forceinline__ auto& of() {
    if constexpr (F == Fn::Sum)
      return sum;
    else if constexpr (F == Fn::Abs)
      return abs;
    else if constexpr (F == Fn::Sq)
      return sq;
    else if constexpr (F == Fn::Min)
      return mn;
    else if constexpr (F == Fn::Max)
      return mx;
    else
      return amx;
  }
  __device__ void init() {
    each_fn(mask, [&](auto fc) { of<decltype(fc)::value>().init(); });
  }
  // Each element is converted and checked once for all the ops (columns j + S·k, as
  // LaneAcc::add).
  template <int S = 1>
  __device__ __forceinline__ void add(const T (&x)[4], i64 j, i64 cols) {
    double d[4];
    bool ok[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      d[k] = static_cast<double>(x[k]);
      ok[k] = j + S * k >= 0 && j + S * k < cols;
    }
    each_fn(mask, [&](auto fc) {
      constexpr Fn F = decltype(fc)::value;
      if constexpr (Policy<F>::is_sum())
        of<F>().add_checked(d, ok);
      else
        of<F>().add_checked(x, ok);
    });
  }
  // The same for four elements inside the row (no checks).
  __device__ __forceinline__ void add_inside(const T (&x)[4]) {
    double d[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
      d[k] = static_cast<double>(x[k]);
    each_fn(mask, [&](auto fc) {
      constexpr Fn F = decltype(fc)::value;
      auto& acc = of<F>();
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        if constexpr (Policy<F>::is_sum())
          acc.v[k] = Policy<F>::combine(acc.v[k], Policy<F>::f(d[k]));
        else
          acc.v[k] = Policy<F>::combine(acc.v[k], Policy<F>::f(x[k]));
      }
    });
  }
  template <int M>
  __device__ __forceinline__ void unshift(int lane) {
    each_fn(mask, [&](auto fc) { of<decltype(fc)::value>().template unshift<M>(lane); });
  }
};

// Raw row values of every op of the mask: the data read once (warps as row_values_kernel).
template <class T, int U, int TPR>
__global__ void __launch_bounds__(256)
    fused_row_values_kernel(const T* __restrict__ a, i64 rows, i64 cols, i64 ld, double* rowvals,
                            i64 stride, unsigned mask) {
  const int lane = threadIdx.x & 31;
  const i64 warps = static_cast<i64>(gridDim.x) * (blockDim.x / 32);
  const i64 w0 = (static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if constexpr (TPR == kWholeRow) {
    for (i64 r = w0; r < rows; r += warps) {
      FusedAcc<T> acc;
      acc.mask = mask;
      acc.init();
      warp_row_scan<T, U>(a + r * ld, cols, lane, acc);
      each_fn(mask, [&](auto fc) {
        constexpr Fn F = decltype(fc)::value;
        const double v = lane_tree<Policy<F>>(acc.template of<F>().v, lane);
        if (lane == 0)
          rowvals[fn_slot(mask, F) * stride + r] = v;
      });
    }
  } else {
    narrow_row_batches<T, TPR>(
        a, rows, cols, ld, lane, w0, warps, [&](const T(&x)[4], i64 r, int sl) {
          FusedAcc<T> acc;
          acc.mask = mask;
          acc.init();
          acc.add(x, 4 * sl, cols);
          each_fn(mask, [&](auto fc) {
            constexpr Fn F = decltype(fc)::value;
            const double v = lane_tree<Policy<F>, TPR>(acc.template of<F>().v, sl);
            if (sl == 0 && r < rows)
              rowvals[fn_slot(mask, F) * stride + r] = v;
          });
        });
  }
}

// Raw row values of every op of the mask by batches of R rows a warp (Walk, as
// batched_row_values_kernel).
template <class T, class Walk, int R>
__global__ void __launch_bounds__(256)
    fused_batched_row_values_kernel(const T* __restrict__ a, i64 rows, i64 cols, i64 ld,
                                    double* rowvals, i64 stride, unsigned mask) {
  const int lane = threadIdx.x & 31;
  auto make_acc = [&] {
    FusedAcc<T> acc;
    acc.mask = mask;
    acc.init();
    return acc;
  };
  auto store = [&](i64 i, FusedAcc<T>& acc) {
    each_fn(mask, [&](auto fc) {
      constexpr Fn F = decltype(fc)::value;
      const double v = Walk::template tree<Policy<F>>(acc.template of<F>().v, lane);
      if (lane == 0 && i < rows)
        rowvals[fn_slot(mask, F) * stride + i] = v;
    });
  };
  each_row_batch<R>(rows, [&](i64 r0) {
    Walk::template rows<T, R>(a, r0, rows, cols, ld, lane, make_acc, store);
  });
}

// Column partials of 64-row groups for every op of the mask (each_col_group, as
// col_groups_kernel).
template <class T, bool kVec>
__global__ void __launch_bounds__(256)
    fused_col_groups_kernel(const T* __restrict__ a, i64 rows, i64 cols, i64 ld, double* out,
                            i64 stride, unsigned mask) {
  constexpr int V = group_cols<T, kVec>();
  constexpr int R = 8; // rows in flight per thread
  each_col_group<T, kVec, R>(a, rows, cols, ld, [&](i64 g, i64 j, auto&& group_rows) {
    double ps[3][V]; // the Sum family (Fn 0 … 2) in double
    T pm[3][V];      // Min, Max, NormInf (Fn 3 … 5) in the data's type
    each_fn(mask, [&](auto fc) {
      constexpr Fn F = decltype(fc)::value;
      constexpr int f = static_cast<int>(F);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        if constexpr (Policy<F>::is_sum())
          ps[f][k] = Policy<F>::identity();
        else
          pm[f - 3][k] = static_cast<T>(Policy<F>::identity());
      }
    });
    group_rows([&](const T(&x)[V]) {
      double d[V]; // converted once for all the ops
#pragma unroll
      for (int k = 0; k < V; ++k)
        d[k] = static_cast<double>(x[k]);
      // One test of the mask per op and row, not per element.
      each_fn(mask, [&](auto fc) {
        constexpr Fn F = decltype(fc)::value;
        constexpr int f = static_cast<int>(F);
#pragma unroll
        for (int k = 0; k < V; ++k) {
          if constexpr (Policy<F>::is_sum())
            ps[f][k] = Policy<F>::combine(ps[f][k], Policy<F>::f(d[k]));
          else
            pm[f - 3][k] = Policy<F>::combine(pm[f - 3][k], Policy<F>::f(x[k]));
        }
      });
    });
    each_fn(mask, [&](auto fc) {
      constexpr Fn F = decltype(fc)::value;
      constexpr int f = static_cast<int>(F);
      double* dst = out + fn_slot(mask, F) * stride + g * cols;
#pragma unroll
      for (int k = 0; k < V; ++k)
        if (j + k < cols) {
          if constexpr (Policy<F>::is_sum())
            dst[j + k] = ps[f][k];
          else
            dst[j + k] = static_cast<double>(pm[f - 3][k]);
        }
    });
  });
}

// dst[i] = finish(src[i]) (Mean divides by count, Norm2 takes the root, others copy).
__global__ void copy_finish_kernel(const double* __restrict__ src, double* dst, i64 n,
                                   int finish_code, double count) {
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<i64>(gridDim.x) * blockDim.x)
    dst[i] = finish(finish_code, src[i], count);
}

} // namespace tessera::cuda::detail
