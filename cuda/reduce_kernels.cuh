// Reduction kernels in the canonical order of core/reduction.hpp.
//
// Row values: one warp per row. Thread L holds four of the kSumLanes = 128 lane accumulators
// and reads them with 16-byte loads (one float4, or two double2); the fixed halving tree of
// the canonical order is five shuffle steps (lane c + 64 lives 16 threads away, c + 32 eight,
// …, c + 4 one) and two steps inside the thread. A row that does not start on a 16-byte
// boundary is read as the aligned vectors that cover it, and thread L accumulates the lanes
// its vectors hold; one shuffle round per row puts them in place for the tree. Rows of at most
// 128 columns go fewer threads to a row, several rows a warp at once (narrow_row_batches).
//
// Column partials: reduce_cols.cuh.
//
// Every add is a separately rounded double add (__dadd_rn; the library builds with
// --fmad=false), so the bits equal the serial reference's.
#pragma once

#include <math_constants.h>

#include <type_traits>

#include "core/reduction.hpp"
#include "cuda/launch.cuh"

namespace tessera::cuda::detail {

// The canonical order's super-block (core/reduction.hpp), in the kernels' index type.
constexpr i64 kSuperBlocks = kReduceSuperBlocks;

// f and ⊕ of the ops, with Mean sharing Sum's kernels (it only finalizes differently).
enum class Fn { Sum, Abs, Sq, Min, Max, AbsMax };

template <Fn F>
struct Policy {
  __device__ __forceinline__ static double identity() {
    if constexpr (F == Fn::Min)
      return CUDART_INF;
    else if constexpr (F == Fn::Max)
      return -CUDART_INF;
    else
      return 0.0;
  }
  __device__ __forceinline__ static double f(double x) {
    if constexpr (F == Fn::Abs || F == Fn::AbsMax)
      return fabs(x);
    else if constexpr (F == Fn::Sq)
      return __dmul_rn(x, x);
    else
      return x;
  }
  // NaN-propagating min / max, exactly as src/cpu/reduce.cpp.
  __device__ __forceinline__ static double combine(double a, double b) {
    if constexpr (F == Fn::Sum || F == Fn::Abs || F == Fn::Sq)
      return __dadd_rn(a, b);
    else if constexpr (F == Fn::Min)
      return (a < b || a != a) ? a : b;
    else
      return (a > b || a != a) ? a : b;
  }
  // Min, Max and NormInf of f32 data in f32: the same choices (converting to double is exact
  // and keeps the order), so the same result after the conversion, at f32 speed.
  __device__ __forceinline__ static float f(float x) {
    static_assert(!is_sum(), "the Sum family accumulates in double");
    if constexpr (F == Fn::AbsMax)
      return fabsf(x);
    else
      return x;
  }
  __device__ __forceinline__ static float combine(float a, float b) {
    static_assert(!is_sum(), "the Sum family accumulates in double");
    if constexpr (F == Fn::Min)
      return (a < b || a != a) ? a : b;
    else
      return (a > b || a != a) ? a : b;
  }
  static constexpr bool is_sum() { return F == Fn::Sum || F == Fn::Abs || F == Fn::Sq; }
};

// One 16-byte vector of T (float4 or double2), read with a streaming load into x[0 … 16/sizeof(T)).
template <class T>
struct Vec16 {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "f32 or f64 data");
  using type = std::conditional_t<std::is_same_v<T, float>, float4, double2>;
  __device__ __forceinline__ static void load(const T* p, T* x) {
    const type v = __ldcs(reinterpret_cast<const type*>(p));
    x[0] = v.x;
    x[1] = v.y;
    if constexpr (std::is_same_v<T, float>) {
      x[2] = v.z;
      x[3] = v.w;
    }
  }
};

// Loads the 16-byte vector at aligned position p of `pa` (the aligned base of a row whose
// column 0 sits at position m) into x; elements outside columns [0, cols) read as zero and are
// never used. Only whole vectors inside the row are read as vectors.
template <class T>
__device__ __forceinline__ void load_row_vec(const T* pa, i64 p, int m, i64 cols, T* x) {
  constexpr int V = 16 / sizeof(T);
  const i64 c = p - m;
  if (c >= 0 && c + V <= cols) {
    Vec16<T>::load(pa + p, x);
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k)
      x[k] = (c + k >= 0 && c + k < cols) ? pa[p + k] : T(0);
  }
}

// One op's four lane accumulators of a thread.
template <class P, class A = double>
struct LaneAcc {
  A v[4];
  __device__ void init() {
#pragma unroll
    for (int k = 0; k < 4; ++k)
      v[k] = static_cast<A>(P::identity());
  }
  // v[k] ⊕= f(x[k]) for the elements k whose column j + S·k lies in [0, cols) (S = 1: four
  // neighbours; S = 32: the strided lanes of strided_rows).
  template <int S = 1, class T>
  __device__ __forceinline__ void add(const T (&x)[4], i64 j, i64 cols) {
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (j + S * k >= 0 && j + S * k < cols)
        v[k] = P::combine(v[k], P::f(static_cast<double>(x[k])));
  }
  // The same for four elements inside the row (no checks).
  template <class T>
  __device__ __forceinline__ void add_inside(const T (&x)[4]) {
#pragma unroll
    for (int k = 0; k < 4; ++k)
      v[k] = P::combine(v[k], P::f(static_cast<double>(x[k])));
  }
  // The same with the elements already converted and checked.
  __device__ __forceinline__ void add_checked(const A (&d)[4], const bool (&ok)[4]) {
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (ok[k])
        v[k] = P::combine(v[k], P::f(d[k]));
  }
  // From the shifted layout of warp_row_scan to the canonical one: this thread's slot k
  // receives canonical lane 4*lane + k, held by thread lane + (k + M) / 4 in slot (k + M) % 4.
  template <int M>
  __device__ __forceinline__ void unshift(int lane) {
    A w[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
      w[k] = __shfl_sync(0xffffffffu, v[(k + M) & 3], (lane + (k + M) / 4) & 31);
#pragma unroll
    for (int k = 0; k < 4; ++k)
      v[k] = w[k];
  }
};

// acc.unshift<m>(lane) for a row of phase m (0 <= m < 16 / sizeof(T)) within its 16-byte vector.
template <class T, class Acc>
__device__ __forceinline__ void unshift_phase(Acc& acc, int m, int lane) {
  if constexpr (sizeof(T) == 4) {
    switch (m) {
    case 0:
      break;
    case 1:
      acc.template unshift<1>(lane);
      break;
    case 2:
      acc.template unshift<2>(lane);
      break;
    default:
      acc.template unshift<3>(lane);
    }
  } else {
    if (m == 1)
      acc.template unshift<1>(lane);
  }
}

// Walks one row with one warp in the canonical lane order: thread L reads the aligned 16-byte
// vectors at row columns 128q + 4L - m … (m: the row's phase within a vector), so its four
// elements of chunk q are always the same four canonical lanes ((4L - m + k) mod 128), each
// fed in ascending column order; acc.add(x, j, cols) takes them (acc.add_inside(x) where the
// whole step lies inside the row). One shuffle round at the end
// (acc.unshift<m>) moves every lane to its canonical thread: no shuffles per chunk.
template <class T, int U, class Acc>
__device__ void warp_row_scan(const T* row, i64 cols, int lane, Acc& acc) {
  constexpr int V = 16 / sizeof(T);
  const int m = static_cast<int>((reinterpret_cast<std::uintptr_t>(row) / sizeof(T)) & (V - 1));
  const T* pa = row - m;
  for (i64 base = -m; base < cols; base += 128 * U) {
    T x[U][4];
    if (base >= 0 && base + 128 * U <= cols) {
      // Every vector of this step lies inside the row: no checks, which the several-op kernel
      // needs to keep up with the memory (its checks cost as much as one op's arithmetic).
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int v = 0; v < 4 / V; ++v)
          Vec16<T>::load(pa + base + m + 128 * u + 4 * lane + v * V, &x[u][v * V]);
#pragma unroll
      for (int u = 0; u < U; ++u)
        acc.add_inside(x[u]);
      continue;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const i64 p = base + m + 128 * u + 4 * lane; // aligned position from pa
#pragma unroll
      for (int v = 0; v < 4 / V; ++v)
        load_row_vec(pa, p + v * V, m, cols, &x[u][v * V]);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
      acc.add(x[u], base + 128 * u + 4 * lane, cols);
  }
  unshift_phase<T>(acc, m, lane);
}

// The halving tree over a warp's lane accumulators: off = 64, 32, 16, 8, 4 across threads,
// then 2 and 1 inside lane 0's thread; the row value in lane 0. Values of threads >= the
// step's width are never read again. With TPR < 32 threads per row (rows of at most 4*TPR
// columns, every lane from 4*TPR on holding the identity), the steps that would only add
// identities are left out and each group of TPR threads reduces its own row (value in the
// group's first thread); every thread of the warp must take part.
template <class P, int TPR = 32, class A>
__device__ A lane_tree(A (&acc)[4], int lane) {
#pragma unroll
  for (int width = TPR / 2; width >= 1; width /= 2) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const A other = __shfl_down_sync(0xffffffffu, acc[k], width, TPR);
      if (lane < width)
        acc[k] = P::combine(acc[k], other);
    }
  }
  acc[0] = P::combine(acc[0], acc[2]);
  acc[1] = P::combine(acc[1], acc[3]);
  return P::combine(acc[0], acc[1]);
}

// The canonical row value r(i) of one row, computed by one warp; valid in lane 0.
template <class T, class P, int U>
__device__ double warp_row_value(const T* row, i64 cols, int lane) {
  LaneAcc<P> acc;
  acc.init();
  warp_row_scan<T, U>(row, cols, lane, acc);
  return lane_tree<P>(acc.v, lane);
}

__device__ __forceinline__ double finish(int op_code, double v, double count) {
  // op_code: 1 Mean (divide), 2 Norm2 (sqrt), 0 nothing.
  if (op_code == 1)
    return __ddiv_rn(v, count);
  if (op_code == 2)
    return __dsqrt_rn(v);
  return v;
}

// The rounds of the warp folds below: the n doubles p[0], p[stride], … loaded 32·Q a round
// (value `at(lane, q)` of the round into x[q] of the lane, zero past n), the next round's loads
// in flight while fold(x, base) folds round `base`'s values in order.
template <int Q, class At, class Fold>
__device__ __forceinline__ void warp_fold_rounds(const double* p, i64 n, i64 stride, int lane,
                                                 At at, Fold fold) {
  double v[Q];
  const auto load = [&](i64 base, double(&x)[Q]) {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const i64 i = base + at(lane, q);
      x[q] = i < n ? __ldcg(p + i * stride) : 0.0;
    }
  };
  if (n > 0)
    load(0, v);
  for (i64 base = 0; base < n; base += 32 * Q) {
    double next[Q];
    if (base + 32 * Q < n)
      load(base + 32 * Q, next);
    fold(v, base);
#pragma unroll
    for (int q = 0; q < Q; ++q)
      v[q] = next[q];
  }
}

// The ascending fold of the n doubles p[0], p[stride], p[2*stride], … onto `init`, by one
// warp; the result in every lane. Lane l holds the Q consecutive values l*Q … l*Q+Q-1 of a
// round; the running value then passes from lane to lane, each lane folding its Q values in
// registers, so the sequential chain costs one add per value and one shuffle per Q values.
template <class P, int Q>
__device__ double warp_fold(const double* p, i64 n, double init, int lane, i64 stride = 1) {
  double acc = init;
  warp_fold_rounds<Q>(
      p, n, stride, lane, [](int l, int q) { return l * Q + q; },
      [&](const double(&v)[Q], i64 base) {
        // Only the lanes that hold values of this round take a turn: a short fold (the 64 row
        // values of a block) then costs no shuffles for empty lanes.
        const i64 left = n - base;
        const int holders = left >= 32 * Q ? 32 : static_cast<int>((left + Q - 1) / Q);
        for (int l = 0; l < holders; ++l) {
          if (lane == l) {
#pragma unroll
            for (int q = 0; q < Q; ++q)
              if (base + l * Q + q < n)
                acc = P::combine(acc, v[q]);
          }
          acc = __shfl_sync(0xffffffffu, acc, l);
        }
      });
  return acc;
}

// The same fold, staged through shared memory (`buf`: 32·Q doubles of the warp's own): each
// round is stored to `buf` (coalesced) and lane 0 alone folds it in order from there. The chain
// then costs one add per value and nothing else, which beats warp_fold's shuffles on long folds.
template <class P, int Q>
__device__ double warp_fold_staged(const double* p, i64 n, double init, int lane, double* buf,
                                   i64 stride = 1) {
  double acc = init;
  warp_fold_rounds<Q>(
      p, n, stride, lane, [](int l, int q) { return 32 * q + l; },
      [&](const double(&v)[Q], i64 base) {
#pragma unroll
        for (int q = 0; q < Q; ++q)
          buf[32 * q + lane] = v[q];
        __syncwarp();
        if (lane == 0) {
          const int count = static_cast<int>(min(static_cast<i64>(32 * Q), n - base));
#pragma unroll 16
          for (int i = 0; i < count; ++i)
            acc = P::combine(acc, buf[i]);
        }
        __syncwarp(); // buf is rewritten next round
      });
  return __shfl_sync(0xffffffffu, acc, 0);
}

// Rows handled by one warp at a time: one, walked in steps (TPR = kWholeRow, rows of any
// length) or, for rows of at most 4*TPR columns (TPR = 1, 2, 4, 8, 32), 32/TPR rows side by
// side, kNarrowBatch times over (their loads fly together).
constexpr int kWholeRow = 0;
constexpr int kNarrowBatch = 4;
template <int TPR>
constexpr int warp_rows() {
  return TPR == kWholeRow ? 1 : (32 / TPR) * kNarrowBatch;
}

// Loads row r's elements 4*sl … 4*sl+3 (zero outside the matrix) for a narrow row.
template <class T>
__device__ __forceinline__ void load_narrow(const T* a, i64 r, i64 rows, i64 cols, i64 ld, int sl,
                                            T (&x)[4]) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const i64 j = 4 * sl + k;
    x[k] = (r < rows && j < cols) ? a[r * ld + j] : T(0);
  }
}

// The rows of narrow-row warps (TPR threads to a row, 32 / TPR rows side by side): each
// thread's group of rows loaded kNarrowBatch at a time (their loads fly together), then
// g(x, r, sl) per loaded row r (r may be past the last row: g checks) with sl the thread's
// place in its row.
template <class T, int TPR, class G>
__device__ __forceinline__ void narrow_row_batches(const T* __restrict__ a, i64 rows, i64 cols,
                                                   i64 ld, int lane, i64 w0, i64 warps, G&& g) {
  constexpr int NG = 32 / TPR;
  const int sl = lane % TPR, sub = lane / TPR;
  for (i64 base = w0 * warp_rows<TPR>(); base < rows; base += warps * warp_rows<TPR>()) {
    T x[kNarrowBatch][4];
#pragma unroll
    for (int b = 0; b < kNarrowBatch; ++b)
      load_narrow(a, base + b * NG + sub, rows, cols, ld, sl, x[b]);
#pragma unroll
    for (int b = 0; b < kNarrowBatch; ++b)
      g(x[b], base + b * NG + sub, sl);
  }
}

// Rows that one step of warp_row_scan<T, U> covers whatever their phase: at most 128·U − 3
// columns of f32, 128·U − 1 of f64.
template <class T, int U>
constexpr i64 short_row_max_cols() {
  return 128 * U - (16 / static_cast<int>(sizeof(T)) - 1);
}

// Rows r0 … r0+R−1 (at most short_row_max_cols<T, U>() columns each) by one warp: the loads of
// all R rows first, in flight together, then g(i, acc) per row i with `acc` (from make_acc())
// fed in the canonical lane layout, as warp_row_scan leaves it. A warp walking such rows one at
// a time keeps only a few hundred bytes in flight between trees. Rows past `rows` read the last
// row again; g must not keep their values.
template <class T, int U, int R, class MakeAcc, class G>
__device__ __forceinline__ void short_rows(const T* __restrict__ a, i64 r0, i64 rows, i64 cols,
                                           i64 ld, int lane, MakeAcc& make_acc, G& g) {
  constexpr int V = 16 / sizeof(T);
  T x[R][U][4];
  int m[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const T* row = a + (r0 + r < rows ? r0 + r : rows - 1) * ld;
    m[r] = static_cast<int>((reinterpret_cast<std::uintptr_t>(row) / sizeof(T)) & (V - 1));
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < 4 / V; ++k)
        load_row_vec(row - m[r], 128 * u + 4 * lane + k * V, m[r], cols, &x[r][u][k * V]);
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    auto acc = make_acc();
#pragma unroll
    for (int u = 0; u < U; ++u)
      acc.add(x[r][u], 128 * u + 4 * lane - m[r], cols);
    unshift_phase<T>(acc, m[r], lane);
    g(r0 + r, acc);
  }
}

// body(r0) for every batch of R rows r0 … r0+R−1 of [0, rows), the warps of the grid striding
// over them.
template <int R, class Body>
__device__ __forceinline__ void each_row_batch(i64 rows, Body body) {
  const i64 warps = static_cast<i64>(gridDim.x) * (blockDim.x / 32);
  const i64 w0 = (static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  for (i64 r0 = w0 * R; r0 < rows; r0 += warps * R)
    body(r0);
}

// Rows r0 … r0+R−1 of at most 128·C columns by one warp, the canonical lanes laid out across
// the warp: thread L holds lanes L, L+32, L+64, L+96 (acc.v[0 … 3]) and reads columns
// 128q + L + 32k (q < C, k < 4) with 4- or 8-byte loads, so each load of the warp is 128 or
// 256 consecutive bytes of one row whatever the row's alignment, and all R·C·4 loads of a
// thread are in flight together. Then g(i, acc) per row i, whose tree is strided_lane_tree: its
// first two levels (off 64, 32) inside the thread, the five others a shuffle of one value
// each. The 16-byte layout of short_rows needs 40 shuffles a row for the tree and up to 8 more
// to undo the row's phase, which bound rows of 129 to 300 columns by instructions. Rows past
// `rows` read the last row again; g must not keep their values.
template <class T, int C, int R, class MakeAcc, class G>
__device__ __forceinline__ void strided_rows(const T* __restrict__ a, i64 r0, i64 rows, i64 cols,
                                             i64 ld, int lane, MakeAcc& make_acc, G& g) {
  T x[R][C][4];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const T* row = a + (r0 + r < rows ? r0 + r : rows - 1) * ld;
#pragma unroll
    for (int q = 0; q < C; ++q)
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const i64 j = 128 * q + lane + 32 * k;
        x[r][q][k] = j < cols ? __ldcs(row + j) : T(0);
      }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    auto acc = make_acc();
#pragma unroll
    for (int q = 0; q < C; ++q)
      acc.template add<32>(x[r][q], 128 * q + lane, cols);
    g(r0 + r, acc);
  }
}

// The canonical halving tree over lanes laid out as strided_rows leaves them (v[k]: lane
// L + 32k of thread L): off = 64 and 32 inside the thread, then 16, 8, 4, 2, 1 across threads;
// the row value in lane 0. Values of threads >= the step's width are never read again.
template <class P, class A>
__device__ __forceinline__ A strided_lane_tree(const A (&v)[4]) {
  A x = P::combine(v[0], v[2]);
  const A y = P::combine(v[1], v[3]);
  x = P::combine(x, y);
#pragma unroll
  for (int off = 16; off >= 1; off /= 2)
    x = P::combine(x, __shfl_down_sync(0xffffffffu, x, off));
  return x;
}

// Rows strided_rows takes R at a time for C chunks of 128 columns: 16 elements of f32 or 8 of
// f64 in flight per thread (64 bytes); more warps an SM then keep the memory busy while others
// run their trees (128 and 256 bytes a thread were slower: docs/performance.md).
template <class T, int C>
constexpr int strided_batch_rows() {
  return (sizeof(T) == 4 ? 4 : 2) / C;
}

// The two walks of batched rows, R rows a warp at once: short_rows (U steps of 16-byte loads,
// four neighbouring lanes a thread, lane_tree) and strided_rows (C chunks, the lanes across the
// warp, strided_lane_tree).
template <int U>
struct ShortWalk {
  template <class T, int R, class MakeAcc, class G>
  __device__ __forceinline__ static void rows(const T* __restrict__ a, i64 r0, i64 rows, i64 cols,
                                              i64 ld, int lane, MakeAcc& make_acc, G& g) {
    short_rows<T, U, R>(a, r0, rows, cols, ld, lane, make_acc, g);
  }
  template <class P, class A>
  __device__ __forceinline__ static A tree(A (&v)[4], int lane) {
    return lane_tree<P>(v, lane);
  }
};
template <int C>
struct StridedWalk {
  template <class T, int R, class MakeAcc, class G>
  __device__ __forceinline__ static void rows(const T* __restrict__ a, i64 r0, i64 rows, i64 cols,
                                              i64 ld, int lane, MakeAcc& make_acc, G& g) {
    strided_rows<T, C, R>(a, r0, rows, cols, ld, lane, make_acc, g);
  }
  template <class P, class A>
  __device__ __forceinline__ static A tree(A (&v)[4], int) {
    return strided_lane_tree<P>(v);
  }
};

// Row values of rows [0, rows) by batches of R rows a warp (Walk), warps grid-striding
// (finished as row_values_kernel's).
template <class T, Fn F, class Walk, int R>
__global__ void __launch_bounds__(256)
    batched_row_values_kernel(const T* __restrict__ a, i64 rows, i64 cols, i64 ld, double* rowvals,
                              int finish_code, double count) {
  using P = Policy<F>;
  const int lane = threadIdx.x & 31;
  auto make_acc = [] {
    LaneAcc<P> acc;
    acc.init();
    return acc;
  };
  auto store = [&](i64 i, LaneAcc<P>& acc) {
    const double v = Walk::template tree<P>(acc.v, lane);
    if (lane == 0 && i < rows)
      rowvals[i] = finish(finish_code, v, count);
  };
  each_row_batch<R>(rows, [&](i64 r0) {
    Walk::template rows<T, R>(a, r0, rows, cols, ld, lane, make_acc, store);
  });
}

// Row values of rows [0, rows), warps grid-striding over rows (finished: Mean divides,
// Norm2 takes the root, when finish_code says so).
template <class T, Fn F, int U, int TPR>
__global__ void __launch_bounds__(256)
    row_values_kernel(const T* __restrict__ a, i64 rows, i64 cols, i64 ld, double* rowvals,
                      int finish_code, double count) {
  using P = Policy<F>;
  const int lane = threadIdx.x & 31;
  const i64 warps = static_cast<i64>(gridDim.x) * (blockDim.x / 32);
  const i64 w0 = (static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if constexpr (TPR == kWholeRow) {
    for (i64 r = w0; r < rows; r += warps) {
      const double v = warp_row_value<T, P, U>(a + r * ld, cols, lane);
      if (lane == 0)
        rowvals[r] = finish(finish_code, v, count);
    }
  } else {
    narrow_row_batches<T, TPR>(a, rows, cols, ld, lane, w0, warps,
                               [&](const T(&x)[4], i64 r, int sl) {
                                 LaneAcc<P> acc;
                                 acc.init();
                                 acc.add(x, 4 * sl, cols);
                                 const double v = lane_tree<P, TPR>(acc.v, sl);
                                 if (sl == 0 && r < rows)
                                   rowvals[r] = finish(finish_code, v, count);
                               });
  }
}

// Rows of at most kTreeMaxCols = 128 columns (where the row table of reduce_launch.cuh chooses
// it), a thread to a row: each warp copies 32 rows into shared memory with coalesced loads, then
// each thread adds its row's elements in the shape of the canonical halving tree
// (core/reduction.hpp), leaving out the lanes past the row's end. Those hold the identity, and
// adding it changes nothing: no lane and no partial sum is -0.0 (each lane starts as 0.0 + f(x)),
// and x + 0.0 == x for every other x. Four lanes a thread and shuffles cost 40 shuffle
// instructions a row of f64 lanes for the tree, which bounded such rows. A row of at most 128
// columns has
// one element a lane, so its value is S(0, 1) with S(c, 128) = 0.0 + f(row[c]) and
// S(c, off) = S(c, 2·off) + S(c + off, 2·off): the tree's levels off = 64, 32, …, 1.
constexpr int kTreeMaxCols = 128;
static_assert(kTreeMaxCols == kSumLanes, "a row of the tree kernel has one element a lane");

// Warps a block: shared memory of 32 rows of 129 elements a warp stays within 48 KiB.
template <class T>
constexpr int tree_warps() {
  return 8 / static_cast<int>(sizeof(T));
}

template <class P, class T, int C, int Off>
__device__ __forceinline__ double tree_value(const T* row, int cols) {
  if constexpr (Off == kSumLanes) {
    // Reached only for C < cols: a right subtree is taken only when its first lane is.
    return P::combine(P::identity(), P::f(static_cast<double>(row[C])));
  } else {
    double v = tree_value<P, T, C, 2 * Off>(row, cols);
    if (C + Off < cols)
      v = P::combine(v, tree_value<P, T, C + Off, 2 * Off>(row, cols));
    return v;
  }
}

template <class T, Fn F>
__global__ void __launch_bounds__(32 * tree_warps<T>())
    row_tree_kernel(const T* __restrict__ a, i64 rows, i64 cols, i64 ld, double* rowvals,
                    int finish_code, double count) {
  using P = Policy<F>;
  extern __shared__ __align__(16) unsigned char tree_smem[];
  const int lane = threadIdx.x & 31, warp = static_cast<int>(threadIdx.x / 32);
  const int c = static_cast<int>(cols), stride = c | 1; // odd: no bank conflicts below
  T* tile = reinterpret_cast<T*>(tree_smem) + warp * 32 * stride;
  const i64 step = static_cast<i64>(gridDim.x) * tree_warps<T>() * 32;
  for (i64 r0 = (static_cast<i64>(blockIdx.x) * tree_warps<T>() + warp) * 32; r0 < rows;
       r0 += step) {
    const int n = static_cast<int>(min(static_cast<i64>(32), rows - r0));
#pragma unroll 8
    for (int i = 0; i < n; ++i)
#pragma unroll
      for (int k = 0; k < kTreeMaxCols / 32; ++k) {
        const int j = lane + 32 * k;
        if (j < c)
          tile[i * stride + j] = __ldcs(a + (r0 + i) * ld + j);
      }
    __syncwarp();
    if (lane < n)
      rowvals[r0 + lane] =
          finish(finish_code, tree_value<P, T, 0, 1>(tile + lane * stride, c), count);
    __syncwarp(); // the tile is rewritten next round
  }
}

// The All axis from the row values, in the canonical order's two levels: one warp per 64-row
// block folds its rows in ascending order into partials[b]; the warp that completes the last
// block of a super-block (ticket in super_done[s], reset to zero afterwards) folds the
// super-block's partials in order into supers[s] (256 partials: one round of loads, then one
// lane's chain); and the warp that completes the last super-block (ticket in *supers_done) folds
// the super-blocks' values in order into *acc. So no warp adds more than 256 values in
// sequence (one warp folding all of a tall matrix's block partials in order took longer than
// cub's whole sum). Folding each block in the row kernel instead, by the warp whose row
// completes it (a ticket per block), saved this launch but cost every row a memory fence:
// slower or level on every shape measured.
// Partials a lane loads a round in these folds: 8 (16 doubles of registers with the next
// round's), so that the kernel's registers leave room for many blocks an SM.
constexpr int kFoldStagedQ = 8;
static_assert(kSuperBlocks <= 32 * kFoldStagedQ, "a super-block folds in one round");
template <Fn F>
__global__ void __launch_bounds__(256)
    all_blocks_kernel(const double* rowvals, i64 rows, double* partials, double* supers,
                      double* acc, int finish_code, double count, unsigned* super_done,
                      unsigned* supers_done) {
  using P = Policy<F>;
  const int lane = threadIdx.x & 31;
  const i64 blocks = (rows + 63) / 64;
  const i64 b = (static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (b >= blocks)
    return;
  const int size = static_cast<int>(min(static_cast<i64>(64), rows - b * 64));
  const double p = warp_fold<P, 8>(rowvals + b * 64, size, P::identity(), lane);
  const i64 nsuper = (blocks + kSuperBlocks - 1) / kSuperBlocks;
  const i64 s = b / kSuperBlocks, first = s * kSuperBlocks;
  const i64 in_super = min(kSuperBlocks, blocks - first);
  int last = 0;
  if (lane == 0) {
    partials[b] = p;
    __threadfence();
    last = atomicAdd(super_done + s, 1u) == static_cast<unsigned>(in_super - 1);
  }
  if (!__shfl_sync(0xffffffffu, last, 0))
    return;
  __threadfence();
  __shared__ double buf[32 * kFoldStagedQ];
  const double q =
      warp_fold_staged<P, kFoldStagedQ>(partials + first, in_super, P::identity(), lane, buf);
  if (nsuper == 1) { // identity ⊕ q is q (core/reduction.hpp)
    if (lane == 0) {
      *acc = finish(finish_code, q, count);
      super_done[s] = 0u;
    }
    return;
  }
  last = 0;
  if (lane == 0) {
    super_done[s] = 0u;
    supers[s] = q;
    __threadfence();
    last = atomicAdd(supers_done, 1u) == static_cast<unsigned>(nsuper - 1);
  }
  if (!__shfl_sync(0xffffffffu, last, 0))
    return;
  __threadfence();
  const double total = warp_fold_staged<P, kFoldStagedQ>(supers, nsuper, P::identity(), lane, buf);
  if (lane == 0) {
    *acc = finish(finish_code, total, count);
    *supers_done = 0u;
  }
}

template <Fn F>
__global__ void fill_identity_kernel(double* v, i64 n) {
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<i64>(gridDim.x) * blockDim.x)
    v[i] = Policy<F>::identity();
}

// v = finish((accumulate ? v : identity)) for a reduction over nothing, or a plain finalize.
template <Fn F>
__global__ void finish_kernel(double* v, i64 n, bool from_identity, int finish_code, double count) {
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<i64>(gridDim.x) * blockDim.x)
    v[i] = finish(finish_code, from_identity ? Policy<F>::identity() : v[i], count);
}

} // namespace tessera::cuda::detail
