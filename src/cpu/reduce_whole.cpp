// A whole matrix's reduction from the local kernels: what one rank's ReducePlan computes, for
// the local benchmark and the kernels' tests.
#include <algorithm>

#include "cpu/reduce.hpp"
#include "cpu/require_shape.hpp"

namespace tessera::cpu {

template <class T>
std::vector<std::vector<double>>
reduce_whole_multi(const std::vector<Op>& ops, Axis axis, const T* a, std::int64_t rows,
                   std::int64_t cols, std::vector<double>& scratch) {
  detail::require_shape("reduce_whole", rows, cols);
  const std::size_t nops = ops.size();
  const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  const auto each = static_cast<std::size_t>(axis == Axis::Cols ? groups * cols : rows);
  if (scratch.size() < nops * each)
    scratch.resize(nops * each);
  std::vector<double*> raw(nops);
  for (std::size_t k = 0; k < nops; ++k)
    raw[k] = scratch.data() + k * each;
  // One read of `a` for every op: row values (Rows, All) or column partials (Cols).
  if (axis == Axis::Cols)
    reduce_col_groups_multi(ops.data(), nops, a, rows, cols, raw.data());
  else
    reduce_rows_multi(ops.data(), nops, a, rows, cols, raw.data());
  std::vector<std::vector<double>> out(nops);
  for (std::size_t k = 0; k < nops; ++k) {
    const Op op = ops[k];
    const double* r = raw[k];
    if (axis == Axis::Rows) {
      out[k].assign(r, r + rows);
      for (auto& x : out[k])
        x = finalize(op, x, static_cast<double>(cols));
    } else if (axis == Axis::All) {
      std::vector<double> p(static_cast<std::size_t>(groups));
      for (std::int64_t g = 0; g < groups; ++g) {
        p[g] = identity(op);
        for (std::int64_t i = g * kReduceBlockRows; i < std::min(rows, (g + 1) * kReduceBlockRows);
             ++i)
          p[g] = combine(op, p[g], r[i]);
      }
      double total = identity(op), open = identity(op);
      fold_partials(op, &total, &open, 0, p.data(), groups, 1);
      close_partials(op, &total, &open, 1);
      out[k] = {finalize(op, total, static_cast<double>(rows) * static_cast<double>(cols))};
    } else {
      std::vector<double>& v = out[k];
      v.assign(static_cast<std::size_t>(cols), identity(op));
      std::vector<double> open(static_cast<std::size_t>(cols), identity(op));
      fold_partials(op, v.data(), open.data(), 0, r, groups, cols);
      close_partials(op, v.data(), open.data(), cols);
      for (auto& x : v)
        x = finalize(op, x, static_cast<double>(rows));
    }
  }
  return out;
}

template <class T>
std::vector<double> reduce_whole(Op op, Axis axis, const T* a, std::int64_t rows, std::int64_t cols,
                                 std::vector<double>& scratch) {
  return std::move(reduce_whole_multi({op}, axis, a, rows, cols, scratch)[0]);
}

template std::vector<double> reduce_whole(Op, Axis, const float*, std::int64_t, std::int64_t,
                                          std::vector<double>&);
template std::vector<double> reduce_whole(Op, Axis, const double*, std::int64_t, std::int64_t,
                                          std::vector<double>&);
template std::vector<std::vector<double>> reduce_whole_multi(const std::vector<Op>&, Axis,
                                                             const float*, std::int64_t,
                                                             std::int64_t, std::vector<double>&);
template std::vector<std::vector<double>> reduce_whole_multi(const std::vector<Op>&, Axis,
                                                             const double*, std::int64_t,
                                                             std::int64_t, std::vector<double>&);

} // namespace tessera::cpu
