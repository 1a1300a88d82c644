// A whole matrix's reduction from the local kernels: what one rank's ReducePlan computes, for
// the local benchmark and the kernels' tests.
#include <algorithm>

#include "cpu/reduce.hpp"
#include "cpu/require_shape.hpp"

namespace tessera::cpu {

template <class T>
std::vector<double> reduce_whole(Op op, Axis axis, const T* a, std::int64_t rows, std::int64_t cols,
                                 std::vector<double>& scratch) {
  detail::require_shape("reduce_whole", rows, cols);
  if (axis == Axis::Rows) {
    std::vector<double> v(static_cast<std::size_t>(rows));
    reduce_rows(op, a, rows, cols, v.data());
    for (auto& x : v)
      x = finalize(op, x, static_cast<double>(cols));
    return v;
  }
  const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  const auto need = static_cast<std::size_t>(axis == Axis::All ? rows : groups * cols);
  if (scratch.size() < need)
    scratch.resize(need);
  if (axis == Axis::All) {
    reduce_rows(op, a, rows, cols, scratch.data());
    double total = identity(op);
    for (std::int64_t g = 0; g < groups; ++g) {
      double p = identity(op);
      for (std::int64_t i = g * kReduceBlockRows; i < std::min(rows, (g + 1) * kReduceBlockRows);
           ++i)
        p = combine(op, p, scratch[static_cast<std::size_t>(i)]);
      total = combine(op, total, p);
    }
    return {finalize(op, total, static_cast<double>(rows) * static_cast<double>(cols))};
  }
  reduce_col_groups(op, a, rows, cols, scratch.data());
  std::vector<double> v(static_cast<std::size_t>(cols), identity(op));
  for (std::int64_t g = 0; g < groups; ++g)
    for (std::int64_t j = 0; j < cols; ++j)
      v[static_cast<std::size_t>(j)] = combine(op, v[static_cast<std::size_t>(j)],
                                               scratch[static_cast<std::size_t>(g * cols + j)]);
  for (auto& x : v)
    x = finalize(op, x, static_cast<double>(rows));
  return v;
}

template std::vector<double> reduce_whole(Op, Axis, const float*, std::int64_t, std::int64_t,
                                          std::vector<double>&);
template std::vector<double> reduce_whole(Op, Axis, const double*, std::int64_t, std::int64_t,
                                          std::vector<double>&);

} // namespace tessera::cpu
