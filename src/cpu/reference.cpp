// Plain serial statements of the transpose and of the canonical reduction order
// (core/reduction.hpp), the Norm2 rescue included. Written for obviousness, not speed: every
// backend is tested against them.
#include "cpu/reference.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "core/throw.hpp"

namespace tessera::reference {

template <class T>
void transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      out[j * rows + i] = in[i * cols + j];
}

void permute(const void* in, void* out, std::size_t element_size,
             std::span<const std::int64_t> shape, std::span<const int> axes) {
  const std::size_t rank = shape.size();
  std::vector<std::int64_t> in_stride(rank, 1), out_len(rank);
  for (std::size_t d = rank; d-- > 1;)
    in_stride[d - 1] = in_stride[d] * shape[d];
  std::int64_t total = 1;
  for (std::size_t k = 0; k < rank; ++k) {
    out_len[k] = shape[static_cast<std::size_t>(axes[k])];
    total *= out_len[k];
  }
  const auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(out);
  for (std::int64_t o = 0; o < total; ++o) {
    // The output index of o, innermost first, and the input offset it names.
    std::int64_t rest = o, i = 0;
    for (std::size_t k = rank; k-- > 0;) {
      i += (rest % out_len[k]) * in_stride[static_cast<std::size_t>(axes[k])];
      rest /= out_len[k];
    }
    std::memcpy(dst + static_cast<std::size_t>(o) * element_size,
                src + static_cast<std::size_t>(i) * element_size, element_size);
  }
}

namespace {

// f(x) of the canonical order, in double.
double element(Op op, double x) {
  switch (op) {
  case Op::Norm1:
  case Op::NormInf:
    return std::fabs(x);
  case Op::Norm2:
    return x * x;
  case Op::Count: // every element counts: the reference knows no missing values
    return 1.0;
  default:
    return x;
  }
}

double start(Op op) {
  if (op == Op::Min)
    return std::numeric_limits<double>::infinity();
  if (op == Op::Max)
    return -std::numeric_limits<double>::infinity();
  return 0.0;
}

// NaN-propagating min / max, so that a NaN anywhere gives NaN whatever the order.
double fold(Op op, double acc, double v) {
  if (is_sum_family(op))
    return acc + v;
  if (op == Op::Min)
    return (acc < v || acc != acc) ? acc : v;
  return (acc > v || acc != acc) ? acc : v;
}

double finish(Op op, double v, double count) {
  if (op == Op::Mean)
    return v / count;
  if (op == Op::Norm2)
    return std::sqrt(v);
  return v;
}

// r(i): the lane-tree sum of f for the Sum family, a plain fold otherwise.
template <class T, class F>
double row_value(Op op, const T* row, std::int64_t cols, F f) {
  if (!is_sum_family(op)) {
    double acc = start(op);
    for (std::int64_t j = 0; j < cols; ++j)
      acc = fold(op, acc, f(static_cast<double>(row[j])));
    return acc;
  }
  double lane[kSumLanes];
  for (int c = 0; c < kSumLanes; ++c) {
    lane[c] = 0.0;
    for (std::int64_t j = c; j < cols; j += kSumLanes)
      lane[c] += f(static_cast<double>(row[j]));
  }
  for (int off = kSumLanes / 2; off >= 1; off /= 2)
    for (int c = 0; c < off; ++c)
      lane[c] += lane[c + off];
  return lane[0];
}

// The un-finalized values of op along axis in the canonical order, with f(k, x) the element
// function of value k (0 for All, the row for Rows, the column for Cols).
template <class T, class F>
std::vector<double> canonical(Op op, Axis axis, const T* a, std::int64_t rows, std::int64_t cols,
                              F f) {
  if (axis == Axis::Rows) {
    std::vector<double> v(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i)
      v[i] = row_value(op, a + i * cols, cols, [&](double x) { return f(i, x); });
    return v;
  }
  const std::int64_t blocks = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  const std::int64_t supers = (blocks + kReduceSuperBlocks - 1) / kReduceSuperBlocks;
  // p(b, k): block b's fold of value k's element terms (the row values for All).
  const auto block_fold = [&](std::int64_t b, std::int64_t k) {
    double p = start(op);
    for (std::int64_t i = b * kReduceBlockRows; i < rows && i < (b + 1) * kReduceBlockRows; ++i)
      p = fold(op, p,
               axis == Axis::All
                   ? row_value(op, a + i * cols, cols, [&](double x) { return f(0, x); })
                   : f(k, static_cast<double>(a[i * cols + k])));
    return p;
  };
  // value k: the super-blocks' folds of their block partials, folded in order.
  const auto value = [&](std::int64_t k) {
    double total = start(op);
    for (std::int64_t s = 0; s < supers; ++s) {
      double q = start(op);
      for (std::int64_t b = s * kReduceSuperBlocks; b < blocks && b < (s + 1) * kReduceSuperBlocks;
           ++b)
        q = fold(op, q, block_fold(b, k));
      total = fold(op, total, q);
    }
    return total;
  };
  std::vector<double> v(static_cast<std::size_t>(axis == Axis::All ? 1 : cols));
  for (std::size_t k = 0; k < v.size(); ++k)
    v[k] = value(static_cast<std::int64_t>(k));
  return v;
}

// The Norm2 rescue of core/reduction.hpp on the finalized norms v.
template <class T>
void rescue_norm2(std::vector<double>& v, Axis axis, const T* a, std::int64_t rows,
                  std::int64_t cols) {
  if (std::none_of(v.begin(), v.end(), [](double r) { return norm2_needs_rescue(r); }))
    return;
  const std::vector<double> max_abs = reduce(Op::NormInf, axis, a, rows, cols);
  std::vector<int> e(v.size(), 0);
  std::vector<bool> rescued(v.size(), false);
  for (std::size_t k = 0; k < v.size(); ++k)
    if (const auto x = norm2_rescue_exponent(max_abs[k]); x && norm2_needs_rescue(v[k])) {
      e[k] = *x;
      rescued[k] = true;
    }
  const std::vector<double> s =
      canonical(Op::Norm2, axis, a, rows, cols, [&](std::int64_t k, double x) {
        const double y = std::ldexp(x, e[static_cast<std::size_t>(k)]);
        return y * y;
      });
  for (std::size_t k = 0; k < v.size(); ++k)
    if (rescued[k])
      v[k] = norm2_unscale(std::sqrt(s[k]), e[k]);
}

} // namespace

template <class T>
std::vector<double> reduce(Op op, Axis axis, const T* a, std::int64_t rows, std::int64_t cols) {
  TESSERA_REQUIRE(rows >= 0 && cols >= 0, InputError, "reduce: negative shape {}x{}", rows, cols);
  std::vector<double> v =
      canonical(op, axis, a, rows, cols, [op](std::int64_t, double x) { return element(op, x); });
  const double count = axis == Axis::All    ? static_cast<double>(rows) * static_cast<double>(cols)
                       : axis == Axis::Rows ? static_cast<double>(cols)
                                            : static_cast<double>(rows);
  for (double& x : v)
    x = finish(op, x, count);
  if (op == Op::Norm2)
    rescue_norm2(v, axis, a, rows, cols);
  return v;
}

template void transpose(const float*, float*, std::int64_t, std::int64_t);
template void transpose(const double*, double*, std::int64_t, std::int64_t);
template void transpose(const std::complex<float>*, std::complex<float>*, std::int64_t,
                        std::int64_t);
template void transpose(const std::complex<double>*, std::complex<double>*, std::int64_t,
                        std::int64_t);
template std::vector<double> reduce(Op, Axis, const float*, std::int64_t, std::int64_t);
template std::vector<double> reduce(Op, Axis, const double*, std::int64_t, std::int64_t);

} // namespace tessera::reference
