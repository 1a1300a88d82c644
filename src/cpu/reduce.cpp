// OpenMP reduction kernels in the canonical order of core/reduction.hpp. Each op is a
// compile-time policy so the inner loops vectorise: the kSumLanes lane accumulators of a row
// map onto SIMD registers, and column folds run along contiguous rows.
#include "cpu/reduce.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

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

// r(i) of one row: lane c sums the elements j ≡ c (mod kSumLanes), then a fixed halving tree.
template <class P, class T>
double row_value(const T* row, std::int64_t cols) {
  if constexpr (!P::sum) {
    // Order does not matter here: independent lanes let the loop vectorise. The lanes hold the
    // element type (exact: these ops only compare, and |x| is exact), so f32 data is not widened
    // to double 16 elements at a time; that conversion made f32 Min/Max twice as slow as a read.
    constexpr int kLanes = 16;
    T lane[kLanes];
    for (int c = 0; c < kLanes; ++c)
      lane[c] = static_cast<T>(P::id);
    std::int64_t j = 0;
    for (; j + kLanes <= cols; j += kLanes)
      for (int c = 0; c < kLanes; ++c)
        lane[c] = P::combine(lane[c], P::f(row[j + c]));
    double acc = P::id;
    for (; j < cols; ++j)
      acc = P::combine(acc, P::f(static_cast<double>(row[j])));
    for (int c = 0; c < kLanes; ++c)
      acc = P::combine(acc, static_cast<double>(lane[c]));
    return acc;
  } else {
    alignas(64) double lane[kSumLanes] = {};
    std::int64_t j = 0;
    for (; j + kSumLanes <= cols; j += kSumLanes)
      for (int c = 0; c < kSumLanes; ++c)
        lane[c] += P::f(static_cast<double>(row[j + c]));
    const int tail = static_cast<int>(cols - j);
    for (int c = 0; c < tail; ++c)
      lane[c] += P::f(static_cast<double>(row[j + c]));
    for (int off = kSumLanes / 2; off >= 1; off /= 2)
      for (int c = 0; c < off; ++c)
        lane[c] += lane[c + off];
    return lane[0];
  }
}

// Columns handled together in a column fold. Long runs along each row keep the hardware
// prefetchers streaming (short runs of many rows measured 40% slower); the accumulators (128 KiB
// at most) stay in L2. Wider matrices are split so that the threads still share the work.
constexpr std::int64_t kColTile = 16384;
constexpr int kFoldRows = 8;

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
    for (std::int64_t j = 0; j < n; ++j) {
      double v = acc[j];
      for (int k = 0; k < kFoldRows; ++k)
        v = P::combine(v, P::f(static_cast<double>(r[k][j])));
      acc[j] = v;
    }
  }
  for (; i < rows; ++i) {
    const T* __restrict row = a + i * ld + j0;
    for (std::int64_t j = 0; j < n; ++j)
      acc[j] = P::combine(acc[j], P::f(static_cast<double>(row[j])));
  }
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
  // Blocks of about kMultiBlockBytes: the first op reads them from memory, the others from L2.
  // A row longer than that is a block of its own (read again by each op, from a lower level).
  constexpr std::int64_t kMultiBlockBytes = 128 * 1024;
  const std::int64_t row_bytes = std::max<std::int64_t>(1, cols * std::int64_t{sizeof(T)});
  const std::int64_t block = std::max<std::int64_t>(1, kMultiBlockBytes / row_bytes);
  const std::int64_t blocks = (rows + block - 1) / block;
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t i0 = b * block, i1 = std::min(rows, i0 + block);
    for (std::size_t k = 0; k < nops; ++k)
      dispatch_op(ops[k], [&](auto p) {
        using P = decltype(p);
        for (std::int64_t i = i0; i < i1; ++i)
          out[k][i] = row_value<P>(a + i * cols, cols);
      });
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
      const std::int64_t g = k / tiles;
      const std::int64_t j0 = (k % tiles) * kColTile;
      const std::int64_t j1 = std::min(j0 + kColTile, cols);
      const std::int64_t i0 = g * kReduceBlockRows;
      const std::int64_t n = std::min(kReduceBlockRows, rows - i0);
      double* acc = out + g * cols;
      std::fill(acc + j0, acc + j1, P::id);
      fold_tile<P>(a + i0 * cols, n, cols, j0, j1, acc);
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
template void fold_rows(Op, const float*, std::int64_t, std::int64_t, double*);
template void fold_rows(Op, const double*, std::int64_t, std::int64_t, double*);

} // namespace tessera::cpu
