// A whole matrix's reduction from the local kernels: what one rank's ReducePlan computes, for
// the local benchmark and the kernels' tests.
#include <algorithm>

#include "cpu/reduce.hpp"
#include "cpu/require_shape.hpp"

namespace tessera::cpu {

template <class T>
void reduce_whole_multi(const std::vector<Op>& ops, Axis axis, const T* a, std::int64_t rows,
                        std::int64_t cols, std::vector<double>& scratch,
                        std::vector<std::vector<double>>& out) {
  detail::require_shape("reduce_whole", rows, cols);
  const std::size_t nops = ops.size();
  const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  out.resize(nops);
  std::vector<double*> raw(nops);
  if (axis == Axis::Rows) { // the row values go straight into the results
    for (std::size_t k = 0; k < nops; ++k) {
      out[k].resize(static_cast<std::size_t>(rows));
      raw[k] = out[k].data();
    }
    reduce_rows_multi(ops.data(), nops, a, rows, cols, raw.data());
    for (std::size_t k = 0; k < nops; ++k)
      finalize_all(ops[k], out[k], static_cast<double>(cols));
    return;
  }
  // One read of `a` for every op: row values (All) or column partials (Cols).
  const auto each = static_cast<std::size_t>(axis == Axis::Cols ? groups * cols : rows);
  const std::size_t block_partials = axis == Axis::All ? static_cast<std::size_t>(groups) : 0;
  if (scratch.size() < nops * each + block_partials)
    scratch.resize(nops * each + block_partials);
  for (std::size_t k = 0; k < nops; ++k)
    raw[k] = scratch.data() + k * each;
  if (axis == Axis::Cols)
    reduce_col_groups_multi(ops.data(), nops, a, rows, cols, raw.data());
  else
    reduce_rows_multi(ops.data(), nops, a, rows, cols, raw.data());
  for (std::size_t k = 0; k < nops; ++k) {
    const Op op = ops[k];
    std::vector<double>& v = out[k];
    if (axis == Axis::All) {
      double* p = scratch.data() + nops * each;
      fold_row_blocks(op, raw[k], rows, p);
      double total = identity(op), open = identity(op);
      fold_partials(op, &total, &open, 0, p, groups, 1);
      close_partials(op, &total, &open, 1);
      v.assign(1, total);
      finalize_all(op, v, static_cast<double>(rows) * static_cast<double>(cols));
    } else {
      v.assign(static_cast<std::size_t>(cols), identity(op));
      std::vector<double> open(static_cast<std::size_t>(cols), identity(op));
      fold_partials(op, v.data(), open.data(), 0, raw[k], groups, cols);
      close_partials(op, v.data(), open.data(), cols);
      finalize_all(op, v, static_cast<double>(rows));
    }
  }
}

template <class T>
std::vector<std::vector<double>>
reduce_whole_multi(const std::vector<Op>& ops, Axis axis, const T* a, std::int64_t rows,
                   std::int64_t cols, std::vector<double>& scratch) {
  std::vector<std::vector<double>> out;
  reduce_whole_multi(ops, axis, a, rows, cols, scratch, out);
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
template void reduce_whole_multi(const std::vector<Op>&, Axis, const float*, std::int64_t,
                                 std::int64_t, std::vector<double>&,
                                 std::vector<std::vector<double>>&);
template void reduce_whole_multi(const std::vector<Op>&, Axis, const double*, std::int64_t,
                                 std::int64_t, std::vector<double>&,
                                 std::vector<std::vector<double>>&);

} // namespace tessera::cpu
