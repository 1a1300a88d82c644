// OpenMP reduction kernels: the local pieces of the canonical order in core/reduction.hpp (whose
// combine rule, identity/combine/finalize, they follow).
// The distributed plan (mpi/reduce_plan.cpp) combines them across ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "core/reduction.hpp"

namespace tessera::cpu {

// out[i] = un-finalized row value of row i (lane-tree sum of f for the Sum family; min / max /
// max|x| otherwise), for 0 <= i < rows. Parallel over rows.
template <class T>
void reduce_rows(Op op, const T* a, std::int64_t rows, std::int64_t cols, double* out);

// reduce_rows of several ops with one read of `a` from memory: out[k][i] is what
// reduce_rows(ops[k], ...) writes, to the bit. Rows go in blocks small enough to stay in the
// cache while each op passes over them.
template <class T>
void reduce_rows_multi(const Op* ops, std::size_t nops, const T* a, std::int64_t rows,
                       std::int64_t cols, double* const* out);

// Column partials of consecutive row groups of kReduceBlockRows rows, starting at row 0 of `a`
// (the last group may be shorter): out[g*cols + j] = fold over the group's rows, ascending,
// of f(a[i][j]), starting from the op's identity (0.0, +inf, -inf). Parallel over groups and
// column tiles.
template <class T>
void reduce_col_groups(Op op, const T* a, std::int64_t rows, std::int64_t cols, double* out);

// reduce_col_groups of several ops with one read of `a` from memory: out[k] is what
// reduce_col_groups(ops[k], ...) writes, to the bit.
template <class T>
void reduce_col_groups_multi(const Op* ops, std::size_t nops, const T* a, std::int64_t rows,
                             std::int64_t cols, double* const* out);

// acc[j] = acc[j] ⊕ f(a[i][j]) for i = 0 … rows-1 in order: continues a column fold.
template <class T>
void fold_rows(Op op, const T* a, std::int64_t rows, std::int64_t cols, double* acc);

// The block partials of row values r[0, rows) (Axis::All): p[g] = the fold, ascending, of the
// rows of block g (rows [g*kReduceBlockRows, …), the last block may be shorter) from the op's
// identity. Parallel over blocks.
void fold_row_blocks(Op op, const double* r, std::int64_t rows, double* p);

// A running fold of block partials in the canonical order (core/reduction.hpp), cols values
// wide (1 for All): total[j], the fold of the closed super-blocks, and open[j], the fold of the
// super-block in progress (both start at the op's identity). fold_partials folds the partials
// partials[g*cols + j] of the global blocks first, first+1, …, first+groups-1 (column partials
// of reduce_col_groups, or the block partials of row values), closing each super-block into
// total as its last block goes in; close_partials then gives the values: total[j] ⊕= open[j].
void fold_partials(Op op, double* total, double* open, std::int64_t first, const double* partials,
                   std::int64_t groups, std::int64_t cols);
void close_partials(Op op, double* total, const double* open, std::int64_t cols);

// The Norm2 rescue's pieces (core/reduction.hpp), for f64 data: reduce_rows and fold_rows of
// Norm2 with f(x) = y*y, y = ldexp(x, e), where e = row_exp[i] for row i (reduce_rows_scaled)
// or col_exp[j] for column j (fold_rows_scaled). Same order, so the same bits as the reference.
void reduce_rows_scaled(const double* a, std::int64_t rows, std::int64_t cols, const int* row_exp,
                        double* out);
void fold_rows_scaled(const double* a, std::int64_t rows, std::int64_t cols, const int* col_exp,
                      double* acc);

// The finalized result of op over a whole rows×cols matrix along axis, from the kernels above
// combined in the canonical order as ReducePlan combines them on one rank (without the Norm2
// rescue): size 1 (All), rows (Rows) or cols (Cols). `scratch` holds the row values or column
// partials in between and is grown when too small, so repeated calls allocate only the result.
template <class T>
std::vector<double> reduce_whole(Op op, Axis axis, const T* a, std::int64_t rows, std::int64_t cols,
                                 std::vector<double>& scratch);

// reduce_whole of several ops from one read of `a` (the several-op kernels above); out[k] for
// ops[k], the same bits as reduce_whole(ops[k], ...).
template <class T>
std::vector<std::vector<double>>
reduce_whole_multi(const std::vector<Op>& ops, Axis axis, const T* a, std::int64_t rows,
                   std::int64_t cols, std::vector<double>& scratch);
// The same into `out`, whose vectors' storage is reused: a caller that reduces again and again
// pays no fresh pages for the results (along Rows of 9000001 × 3, 72 MB a call).
template <class T>
void reduce_whole_multi(const std::vector<Op>& ops, Axis axis, const T* a, std::int64_t rows,
                        std::int64_t cols, std::vector<double>& scratch,
                        std::vector<std::vector<double>>& out);

// The Sum family's fixed halving tree over the kSumLanes lane sums of a row (in place): the
// row's value in the canonical order.
inline double halving_tree(double* lane) noexcept {
  for (int off = kSumLanes / 2; off >= 1; off /= 2)
    for (int c = 0; c < off; ++c)
      lane[c] += lane[c + off];
  return lane[0];
}

} // namespace tessera::cpu
