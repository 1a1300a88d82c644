// Plain serial statements of the transpose and of the canonical reduction order
// (core/reduction.hpp). Written for obviousness, not speed: every backend is tested against them.
#include "cpu/reference.hpp"

#include <cmath>
#include <complex>
#include <limits>

#include "core/throw.hpp"

namespace tessera::reference {

template <class T>
void transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      out[j * rows + i] = in[i * cols + j];
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

// r(i): the lane-tree sum for the Sum family, a plain fold otherwise.
template <class T>
double row_value(Op op, const T* row, std::int64_t cols) {
  if (!is_sum_family(op)) {
    double acc = start(op);
    for (std::int64_t j = 0; j < cols; ++j)
      acc = fold(op, acc, element(op, static_cast<double>(row[j])));
    return acc;
  }
  double lane[kSumLanes];
  for (int c = 0; c < kSumLanes; ++c) {
    lane[c] = 0.0;
    for (std::int64_t j = c; j < cols; j += kSumLanes)
      lane[c] += element(op, static_cast<double>(row[j]));
  }
  for (int off = kSumLanes / 2; off >= 1; off /= 2)
    for (int c = 0; c < off; ++c)
      lane[c] += lane[c + off];
  return lane[0];
}

} // namespace

template <class T>
std::vector<double> reduce(Op op, Axis axis, const T* a, std::int64_t rows, std::int64_t cols) {
  TESSERA_REQUIRE(rows >= 0 && cols >= 0, InputError, "reduce: negative shape {}x{}", rows, cols);
  if (axis == Axis::Rows) {
    std::vector<double> v(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i)
      v[i] = finish(op, row_value(op, a + i * cols, cols), static_cast<double>(cols));
    return v;
  }
  const std::int64_t blocks = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  if (axis == Axis::All) {
    double total = start(op);
    for (std::int64_t b = 0; b < blocks; ++b) {
      double p = start(op);
      for (std::int64_t i = b * kReduceBlockRows; i < rows && i < (b + 1) * kReduceBlockRows; ++i)
        p = fold(op, p, row_value(op, a + i * cols, cols));
      total = fold(op, total, p);
    }
    return {finish(op, total, static_cast<double>(rows) * static_cast<double>(cols))};
  }
  std::vector<double> v(static_cast<std::size_t>(cols));
  for (std::int64_t j = 0; j < cols; ++j) {
    double value = start(op);
    for (std::int64_t b = 0; b < blocks; ++b) {
      double p = start(op);
      for (std::int64_t i = b * kReduceBlockRows; i < rows && i < (b + 1) * kReduceBlockRows; ++i)
        p = fold(op, p, element(op, static_cast<double>(a[i * cols + j])));
      value = fold(op, value, p);
    }
    v[j] = finish(op, value, static_cast<double>(rows));
  }
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
