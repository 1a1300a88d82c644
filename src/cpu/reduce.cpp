// OpenMP reduction kernels in the canonical order of core/reduction.hpp. Each op is a
// compile-time policy so the inner loops vectorise: the kSumLanes lane accumulators of a row
// map onto SIMD registers, and column folds run along contiguous rows.
#include "cpu/reduce.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/throw.hpp"
#include "cpu/require_shape.hpp"

namespace tessera::cpu {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// f(x) and ⊕ of one op. Min/Max propagate NaN so that any order gives the same answer.
template <Op O>
struct Policy {
  static constexpr bool sum = is_sum_family(O);
  static constexpr double id = O == Op::Min ? kInf : (O == Op::Max ? -kInf : 0.0);
  // Templated on the value type so that Min, Max and NormInf (which only compare) can run in the
  // element type: converting to double commutes with them. The Sum family always uses double.
  template <class V>
  static V f(V x) {
    if constexpr (O == Op::Norm1 || O == Op::NormInf)
      return std::fabs(x);
    else if constexpr (O == Op::Norm2)
      return x * x;
    else
      return x;
  }
  template <class V>
  static V combine(V a, V b) {
    if constexpr (sum)
      return a + b;
    else if constexpr (O == Op::Min)
      return ((a < b) | (a != a)) ? a : b; // `|`, not `||`: branch-free, so it vectorises
    else
      return ((a > b) | (a != a)) ? a : b;
  }
};

template <class Fn>
decltype(auto) dispatch_op(Op op, Fn&& fn) {
  switch (op) {
  case Op::Sum:
    return fn(Policy<Op::Sum>{});
  case Op::Min:
    return fn(Policy<Op::Min>{});
  case Op::Max:
    return fn(Policy<Op::Max>{});
  case Op::Mean:
    return fn(Policy<Op::Mean>{});
  case Op::Norm1:
    return fn(Policy<Op::Norm1>{});
  case Op::Norm2:
    return fn(Policy<Op::Norm2>{});
  case Op::NormInf:
    break;
  }
  return fn(Policy<Op::NormInf>{});
}

// Lanes of the ops that only compare (Min, Max, NormInf): their order does not matter, so they
// use as many as keep the compare-and-select chains of a row independent (16 lanes, one
// dependent chain per vector, ran f32 Max at a third of the read bandwidth).
inline constexpr int kCompareLanes = 64;

// How far ahead of its reads a row walk prefetches. The hardware prefetchers stop at each 4 KiB
// page boundary, so on ordinary pages every new page of a row began with misses: f32 Sum along
// rows ran at 0.74 of a plain read of the same buffer on 4 KiB pages and at 1.0-1.08 on 2 MiB
// pages (8192², 2 threads, Intel Xeon).
constexpr std::size_t kPrefetchAhead = 4096;

// Prefetches the lines of [p, p + bytes) shifted kPrefetchAhead ahead. Prefetches never fault,
// so the last ones of a matrix may point past it.
inline void prefetch_ahead(const void* p, std::size_t bytes) {
  const char* c = static_cast<const char*>(p) + kPrefetchAhead;
  for (std::size_t b = 0; b < bytes; b += 64)
    __builtin_prefetch(c + b, 0, 2);
}

// r(i) of one row: lane c sums the elements j ≡ c (mod kSumLanes), then a fixed halving tree.
template <class P, class T>
double row_value(const T* row, std::int64_t cols) {
  if constexpr (!P::sum) {
    // Order does not matter here: independent lanes let the loop vectorise. The lanes hold the
    // element type (exact: these ops only compare, and |x| is exact), so f32 data is not widened
    // to double; that conversion made f32 Min/Max twice as slow as a read.
    constexpr int kLanes = kCompareLanes;
    T lane[kLanes];
    for (int c = 0; c < kLanes; ++c)
      lane[c] = static_cast<T>(P::id);
    std::int64_t j = 0;
    for (; j + kLanes <= cols; j += kLanes) {
      prefetch_ahead(row + j, kLanes * sizeof(T));
      for (int c = 0; c < kLanes; ++c)
        lane[c] = P::combine(lane[c], P::f(row[j + c]));
    }
    double acc = P::id;
    for (; j < cols; ++j)
      acc = P::combine(acc, P::f(static_cast<double>(row[j])));
    for (int c = 0; c < kLanes; ++c)
      acc = P::combine(acc, static_cast<double>(lane[c]));
    return acc;
  } else {
    alignas(64) double lane[kSumLanes] = {};
    std::int64_t j = 0;
    for (; j + kSumLanes <= cols; j += kSumLanes) {
      prefetch_ahead(row + j, kSumLanes * sizeof(T));
      for (int c = 0; c < kSumLanes; ++c)
        lane[c] += P::f(static_cast<double>(row[j + c]));
    }
    const int tail = static_cast<int>(cols - j);
    for (int c = 0; c < tail; ++c)
      lane[c] += P::f(static_cast<double>(row[j + c]));
    return halving_tree(lane);
  }
}

// The running state of one op over one row, fed in chunks of consecutive elements (widened to
// double) in order: the same lanes, in the same order, as row_value, so the same bits. Min, Max
// and NormInf use kCompareLanes of them, in double here: they only compare (and take |x|),
// which commutes with the exact widening, NaN included.
struct RowState {
  alignas(64) double lane[kSumLanes];
  double tail; // Min/Max family: the elements after the last whole group of lanes
};

template <class P>
constexpr int state_lanes() {
  return P::sum ? kSumLanes : kCompareLanes;
}

template <class P>
void start(RowState& s) {
  for (int c = 0; c < state_lanes<P>(); ++c)
    s.lane[c] = P::sum ? 0.0 : P::id;
  s.tail = P::id;
}

// Elements widened and folded together: several groups of kSumLanes, so that each vector of
// lanes is loaded and stored once per chunk instead of once per group.
inline constexpr int kChunk = 8 * kSumLanes;

// x[0, n) are the row's next n elements; n < kChunk only for the row's last chunk. Each lane
// still takes its elements in order (the groups ascending, then the row's partial group).
// The Sum family takes the elements widened to double; Min, Max and NormInf take them in the
// element type X (their lanes hold values of X, so the conversions are exact), which keeps f32
// compares at 16 lanes a vector instead of 8.
template <class P, class X>
void feed(RowState& s, const X* __restrict x, int n) {
  constexpr int kVec = 8; // lanes folded together in registers
  if constexpr (P::sum) {
    const int groups = n / kSumLanes;
    for (int c0 = 0; c0 < kSumLanes; c0 += kVec) {
      double acc[kVec];
      for (int c = 0; c < kVec; ++c)
        acc[c] = s.lane[c0 + c];
      for (int g = 0; g < groups; ++g)
        for (int c = 0; c < kVec; ++c)
          acc[c] += P::f(x[g * kSumLanes + c0 + c]);
      for (int c = 0; c < kVec; ++c)
        s.lane[c0 + c] = acc[c];
    }
    const int rest = n - groups * kSumLanes;
    for (int c = 0; c < rest; ++c)
      s.lane[c] += P::f(x[groups * kSumLanes + c]);
  } else {
    constexpr int kLanes = state_lanes<P>();
    const int whole = n / kLanes * kLanes;
    X acc[kLanes];
    for (int c = 0; c < kLanes; ++c)
      acc[c] = static_cast<X>(s.lane[c]);
    for (int g = 0; g < whole; g += kLanes)
      for (int c = 0; c < kLanes; ++c)
        acc[c] = P::combine(acc[c], P::f(x[g + c]));
    for (int c = 0; c < kLanes; ++c)
      s.lane[c] = static_cast<double>(acc[c]);
    for (int j = whole; j < n; ++j)
      s.tail = P::combine(s.tail, P::f(static_cast<double>(x[j])));
  }
}

template <class P>
double value(RowState& s) {
  if constexpr (P::sum) {
    return halving_tree(s.lane);
  } else {
    double acc = s.tail;
    for (int c = 0; c < state_lanes<P>(); ++c)
      acc = P::combine(acc, s.lane[c]);
    return acc;
  }
}

// Several ops' values of row i from one read of it: each chunk of kChunk elements is widened
// once and folded by every op while it is in L1 (passing over the data once per op held f32 to
// about 0.6 of the read bandwidth: each op widened every element again). `states` holds nops.
template <class T>
void row_values_multi(const Op* ops, std::size_t nops, const T* row, std::int64_t cols,
                      RowState* states, double* const* out, std::int64_t i) {
  for (std::size_t k = 0; k < nops; ++k)
    dispatch_op(ops[k], [&](auto p) { start<decltype(p)>(states[k]); });
  alignas(64) double chunk[kChunk];
  for (std::int64_t j = 0; j < cols; j += kChunk) {
    const int n = static_cast<int>(std::min<std::int64_t>(kChunk, cols - j));
    // Widened (f64 copied too) with one prefetch per line: all of a chunk's prefetches issued at
    // once filled the line-fill buffers and the prefetch instructions themselves stalled, and f64
    // folded straight from the row without them ran at 0.68-0.70 of a read instead of 0.74.
    constexpr int kPerLine = 64 / sizeof(T);
    int c = 0;
    for (; c + kPerLine <= n; c += kPerLine) {
      prefetch_ahead(row + j + c, 64);
      for (int e = 0; e < kPerLine; ++e)
        chunk[c + e] = static_cast<double>(row[j + c + e]);
    }
    for (; c < n; ++c)
      chunk[c] = static_cast<double>(row[j + c]);
    for (std::size_t k = 0; k < nops; ++k)
      dispatch_op(ops[k], [&](auto p) {
        using P = decltype(p);
        if constexpr (P::sum)
          feed<P>(states[k], chunk, n);
        else
          feed<P>(states[k], row + j, n);
      });
  }
  for (std::size_t k = 0; k < nops; ++k)
    out[k][i] = dispatch_op(ops[k], [&](auto p) { return value<decltype(p)>(states[k]); });
}

// Columns handled together in a column fold. Long runs along each row keep the hardware
// prefetchers streaming (short runs of many rows measured 40% slower); the accumulators (128 KiB
// at most) stay in L2. Wider matrices are split so that the threads still share the work.
constexpr std::int64_t kColTile = 16384;
constexpr int kFoldRows = 8;

// acc[j] = acc[j] ⊕ f(x(k, j)) for k = 0 … R-1 in order, j < n (x(k, j) gives the element, as
// f32 or f64). The Sum family widens it to double and keeps each column's value in a register
// across the R rows (it vectorises that way). The compare-and-select ops (NaN-propagating, so not
// a plain max) were left scalar and branchy in that form (f32 Max along columns at half the read
// bandwidth) and vectorise only as one row at a time over the columns: they go row by row over
// blocks of kFoldBlock columns, whose accumulators stay in L1 in the element's own type (exact:
// they hold elements, |elements| or ±inf), 16 f32 lanes a vector instead of 8.
constexpr std::int64_t kFoldBlock = 512;
template <class P, int R, bool kPrefetch, class X>
void fold_columns(std::int64_t n, double* __restrict acc, X&& x) {
  if constexpr (!P::sum) {
    using E = std::decay_t<decltype(x(0, 0))>;
    alignas(64) E a[kFoldBlock];
    for (std::int64_t j0 = 0; j0 < n; j0 += kFoldBlock) {
      const std::int64_t m = std::min(n - j0, kFoldBlock);
      for (std::int64_t j = 0; j < m; ++j)
        a[j] = static_cast<E>(acc[j0 + j]);
      constexpr std::int64_t kLine = 64 / sizeof(E);
      for (int k = 0; k < R; ++k) {
        if constexpr (kPrefetch) {
          for (std::int64_t jl = 0; jl < m; jl += kLine) {
            prefetch_ahead(&x(k, j0 + jl), 64); // one line at a time: see row_values_multi
            for (std::int64_t j = jl; j < std::min(m, jl + kLine); ++j)
              a[j] = P::combine(a[j], P::f(x(k, j0 + j)));
          }
        } else {
          for (std::int64_t j = 0; j < m; ++j)
            a[j] = P::combine(a[j], P::f(x(k, j0 + j)));
        }
      }
      for (std::int64_t j = 0; j < m; ++j)
        acc[j0 + j] = static_cast<double>(a[j]);
    }
    return;
  }
  for (std::int64_t j = 0; j < n; ++j) {
    double v = acc[j];
    for (int k = 0; k < R; ++k)
      v = P::combine(v, P::f(static_cast<double>(x(k, j))));
    acc[j] = v;
  }
}

// acc[j] = acc[j] ⊕ f(a[i][j]) over rows [0, rows) of a, columns [j0, j1).
template <class P, class T>
void fold_tile(const T* a, std::int64_t rows, std::int64_t ld, std::int64_t j0, std::int64_t j1,
               double* acc_base) {
  double* __restrict acc = acc_base + j0; // never overlaps the input: lets the loop vectorise
  const std::int64_t n = j1 - j0;
  std::int64_t i = 0;
  // kFoldRows rows per sweep: each column's value stays in a register across them (still added
  // row after row, in order), so the accumulators are loaded and stored once per kFoldRows rows
  // instead of once per row; with one row per sweep that traffic held the fold to 65% of a read.
  for (; i + kFoldRows <= rows; i += kFoldRows) {
    const T* __restrict r[kFoldRows];
    for (int k = 0; k < kFoldRows; ++k)
      r[k] = a + (i + k) * ld + j0;
    fold_columns<P, kFoldRows, true>(n, acc,
                                     [&](int k, std::int64_t j) -> const T& { return r[k][j]; });
  }
  for (; i < rows; ++i) {
    const T* __restrict row = a + i * ld + j0;
    fold_columns<P, 1, true>(n, acc, [&](int, std::int64_t j) -> const T& { return row[j]; });
  }
}

// Columns widened at a time by the several-op column fold: kFoldRows rows of them in doubles
// (16 KiB) stay in L1 while every op folds them.
constexpr std::int64_t kWideCols = 256;

// acc[j] = acc[j] ⊕ f(x[k*stride + j]) for k = 0 … R-1 in order, j < n.
template <class P, int R, bool kPrefetch, class X>
void fold_wide_rows(const X* __restrict x, std::int64_t stride, std::int64_t n,
                    double* __restrict acc) {
  fold_columns<P, R, kPrefetch>(
      n, acc, [&](int k, std::int64_t j) -> const X& { return x[k * stride + j]; });
}

// fold_tile for several ops from one read of the rows: each piece of kFoldRows rows ×
// kWideCols columns is widened to double once (f32, for the Sum family) and folded by every op
// while in L1.
// acc[k] is op k's accumulator row (columns indexed from 0 like a's).
template <class T>
void fold_tile_multi(const Op* ops, std::size_t nops, const T* a, std::int64_t rows,
                     std::int64_t ld, std::int64_t j0, std::int64_t j1, double* const* acc) {
  alignas(64) double wide[kFoldRows * kWideCols];
  const bool widen = std::any_of(ops, ops + nops, [](Op op) { return is_sum_family(op); });
  for (std::int64_t i = 0; i < rows; i += kFoldRows) {
    const int nr = static_cast<int>(std::min<std::int64_t>(kFoldRows, rows - i));
    for (std::int64_t jc = j0; jc < j1; jc += kWideCols) {
      const std::int64_t n = std::min(kWideCols, j1 - jc);
      const T* raw = a + i * ld + jc;
      const double* x = wide;
      std::int64_t stride = kWideCols;
      if constexpr (std::is_same_v<T, double>) {
        x = raw;
        stride = ld;
      } else if (widen) {
        for (int k = 0; k < nr; ++k)
          for (std::int64_t j = 0; j < n; ++j)
            wide[k * kWideCols + j] = static_cast<double>(raw[k * ld + j]);
      }
      for (std::size_t o = 0; o < nops; ++o)
        dispatch_op(ops[o], [&](auto p) {
          using P = decltype(p);
          // The Sum family folds the widened rows, the compare ops the rows as they are.
          // No software prefetch here: one per line in the widening loop, or in the folds,
          // slowed three ops along columns (f32 0.60 -> 0.49 of a read, f64 0.88 -> 0.55).
          const auto fold = [&](const auto* rows_k, std::int64_t step) {
            if (nr == kFoldRows) {
              fold_wide_rows<P, kFoldRows, false>(rows_k, step, n, acc[o] + jc);
            } else {
              for (int k = 0; k < nr; ++k)
                fold_wide_rows<P, 1, false>(rows_k + k * step, step, n, acc[o] + jc);
            }
          };
          if constexpr (P::sum)
            fold(x, stride);
          else
            fold(raw, ld);
        });
    }
  }
}

// Work item k of the column-partial kernels: row group g (rows [i0, i0 + n)) × column tile
// [j0, j1), `tiles` tiles of kColTile columns per group.
struct GroupTile {
  std::int64_t g, i0, n, j0, j1;
};
GroupTile group_tile(std::int64_t k, std::int64_t tiles, std::int64_t rows, std::int64_t cols) {
  GroupTile t{};
  t.g = k / tiles;
  t.j0 = (k % tiles) * kColTile;
  t.j1 = std::min(t.j0 + kColTile, cols);
  t.i0 = t.g * kReduceBlockRows;
  t.n = std::min(kReduceBlockRows, rows - t.i0);
  return t;
}

} // namespace

double identity(Op op) noexcept {
  return dispatch_op(op, [](auto p) { return decltype(p)::id; });
}

double combine(Op op, double a, double b) noexcept {
  return dispatch_op(op, [&](auto p) { return decltype(p)::combine(a, b); });
}

double finalize(Op op, double v, double count) noexcept {
  if (op == Op::Mean)
    return v / count;
  if (op == Op::Norm2)
    return std::sqrt(v);
  return v;
}

template <class T>
void reduce_rows(Op op, const T* a, std::int64_t rows, std::int64_t cols, double* out) {
  detail::require_shape("reduce_rows", rows, cols);
  dispatch_op(op, [&](auto p) {
    using P = decltype(p);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < rows; ++i)
      out[i] = row_value<P>(a + i * cols, cols);
  });
}

template <class T>
void reduce_rows_multi(const Op* ops, std::size_t nops, const T* a, std::int64_t rows,
                       std::int64_t cols, double* const* out) {
  detail::require_shape("reduce_rows_multi", rows, cols);
  if (nops == 1) {
    reduce_rows(ops[0], a, rows, cols, out[0]);
    return;
  }
#pragma omp parallel
  {
    std::vector<RowState> states(nops);
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < rows; ++i)
      row_values_multi(ops, nops, a + i * cols, cols, states.data(), out, i);
  }
}

template <class T>
void reduce_col_groups(Op op, const T* a, std::int64_t rows, std::int64_t cols, double* out) {
  detail::require_shape("reduce_col_groups", rows, cols);
  const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  const std::int64_t tiles = (cols + kColTile - 1) / kColTile;
  dispatch_op(op, [&](auto p) {
    using P = decltype(p);
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < groups * tiles; ++k) {
      const GroupTile t = group_tile(k, tiles, rows, cols);
      double* acc = out + t.g * cols;
      std::fill(acc + t.j0, acc + t.j1, P::id);
      fold_tile<P>(a + t.i0 * cols, t.n, cols, t.j0, t.j1, acc);
    }
  });
}

template <class T>
void reduce_col_groups_multi(const Op* ops, std::size_t nops, const T* a, std::int64_t rows,
                             std::int64_t cols, double* const* out) {
  detail::require_shape("reduce_col_groups_multi", rows, cols);
  if (nops == 1) {
    reduce_col_groups(ops[0], a, rows, cols, out[0]);
    return;
  }
  const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  const std::int64_t tiles = (cols + kColTile - 1) / kColTile;
#pragma omp parallel
  {
    std::vector<double*> acc(nops);
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < groups * tiles; ++k) {
      const GroupTile t = group_tile(k, tiles, rows, cols);
      for (std::size_t o = 0; o < nops; ++o) {
        acc[o] = out[o] + t.g * cols;
        std::fill(acc[o] + t.j0, acc[o] + t.j1, identity(ops[o]));
      }
      fold_tile_multi(ops, nops, a + t.i0 * cols, t.n, cols, t.j0, t.j1, acc.data());
    }
  }
}

void fold_partials(Op op, double* acc, const double* partials, std::int64_t groups,
                   std::int64_t cols) {
  // Column tiles keep acc in L1 while the groups stream by.
  constexpr std::int64_t kTile = 512;
  const std::int64_t tiles = (cols + kTile - 1) / kTile;
  dispatch_op(op, [&](auto p) {
    using P = decltype(p);
#pragma omp parallel for schedule(static) if (groups * cols > 65536)
    for (std::int64_t t = 0; t < tiles; ++t) {
      const std::int64_t j0 = t * kTile, j1 = std::min(cols, j0 + kTile);
      for (std::int64_t g = 0; g < groups; ++g) {
        const double* __restrict row = partials + g * cols;
        double* __restrict a = acc;
        for (std::int64_t j = j0; j < j1; ++j)
          a[j] = P::combine(a[j], row[j]);
      }
    }
  });
}

template <class T>
void fold_rows(Op op, const T* a, std::int64_t rows, std::int64_t cols, double* acc) {
  detail::require_shape("fold_rows", rows, cols);
  const std::int64_t tiles = (cols + kColTile - 1) / kColTile;
  dispatch_op(op, [&](auto p) {
    using P = decltype(p);
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < tiles; ++t)
      fold_tile<P>(a, rows, cols, t * kColTile, std::min((t + 1) * kColTile, cols), acc);
  });
}

template void reduce_rows(Op, const float*, std::int64_t, std::int64_t, double*);
template void reduce_rows(Op, const double*, std::int64_t, std::int64_t, double*);
template void reduce_rows_multi(const Op*, std::size_t, const float*, std::int64_t, std::int64_t,
                                double* const*);
template void reduce_rows_multi(const Op*, std::size_t, const double*, std::int64_t, std::int64_t,
                                double* const*);
template void reduce_col_groups(Op, const float*, std::int64_t, std::int64_t, double*);
template void reduce_col_groups(Op, const double*, std::int64_t, std::int64_t, double*);
template void reduce_col_groups_multi(const Op*, std::size_t, const float*, std::int64_t,
                                      std::int64_t, double* const*);
template void reduce_col_groups_multi(const Op*, std::size_t, const double*, std::int64_t,
                                      std::int64_t, double* const*);
template void fold_rows(Op, const float*, std::int64_t, std::int64_t, double*);
template void fold_rows(Op, const double*, std::int64_t, std::int64_t, double*);

} // namespace tessera::cpu
