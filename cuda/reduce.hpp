// Reductions of f32/f64 matrices on the GPU in the canonical order of core/reduction.hpp: the
// Sum family gives the same bits as the CPU backend and the serial reference, whatever the grid.
// Device pointers (data and results); work is queued on `stream`; `a` is rows × cols with
// leading dimension ld >= cols.
//
// The pieces mirror src/cpu/reduce.hpp so that a distributed plan assembles the same result
// from either backend; reduce() is the whole single-block reduction (what reference::reduce
// computes, but for the Norm2 rescue of core/reduction.hpp, which ReducePlan and the
// out-of-core reduction run on the host), used when one device holds the whole matrix.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backend_fn.hpp"
#include "core/dtype.hpp"
#include "core/reduction.hpp"
#include "cuda/buffer.hpp"

struct CUstream_st;

namespace tessera::cuda {

// Scratch for reduce() and reduce_fused(). One workspace per stream: two reductions
// running at once must not share one. Counters inside are left at zero after each launch.
class ReduceWorkspace {
public:
  // Makes room for a rows × cols reduction along `axis`, of `ops` ops fused by reduce_fused()
  // (allocates and zero-fills on growth; the memset is queued on `stream`).
  TESSERA_CUDA_FN(void reserve(CUstream_st* stream, Axis axis, std::int64_t rows, std::int64_t cols,
                               int ops = 1));
  void* data() const noexcept { return buf_.data(); }
  std::size_t bytes() const noexcept { return buf_.bytes(); }
  // Per-super-block counters (All axis) the workspace holds; their place is fixed at allocation.
  std::int64_t counter_capacity() const noexcept { return counters_; }
  // Bytes of doubles (row values, partials) after the counters.
  TESSERA_CUDA_FN_OR(0, std::size_t double_capacity() const noexcept);

private:
  DeviceBuffer buf_;
  std::int64_t counters_ = 0;
};

// The finalized result of op along axis, as reference::reduce without the Norm2 rescue (the
// ordinary pass: f64 norms that overflow are inf here): out has 1 (All), rows (Rows) or cols
// (Cols) doubles.
TESSERA_CUDA_FN(void reduce(CUstream_st* stream, Op op, Axis axis, DType t, const void* a,
                            std::int64_t rows, std::int64_t cols, std::int64_t ld, double* out,
                            ReduceWorkspace& ws));

// reduce() of every op of `ops` from ONE pass over the data: out[k] (device) gets what
// reduce(ops[k], …) gives, bit for bit. Reserve the workspace with ops.size().
TESSERA_CUDA_FN(void reduce_fused(CUstream_st* stream, const std::vector<Op>& ops, Axis axis,
                                  DType t, const void* a, std::int64_t rows, std::int64_t cols,
                                  std::int64_t ld, double* const* out, ReduceWorkspace& ws));

// Several ops' pieces for a distributed plan (what reduce_rows / reduce_col_groups give op by
// op) from ONE pass over the data. Ops of one kind share a slot (Sum and Mean do):
// reduce_fused_slots(ops) slots, op's at reduce_fused_slot(ops, op); slot s of the results starts
// at out + s*stride and holds the `rows` row values, or the groups × cols column partials, as the
// single-op functions lay them out. rows, cols > 0; stride >= what one slot holds.
TESSERA_CUDA_FN_OR(0, int reduce_fused_slots(const std::vector<Op>& ops));
TESSERA_CUDA_FN_OR(0, int reduce_fused_slot(const std::vector<Op>& ops, Op op));
TESSERA_CUDA_FN(void reduce_rows_fused(CUstream_st* stream, const std::vector<Op>& ops, DType t,
                                       const void* a, std::int64_t rows, std::int64_t cols,
                                       std::int64_t ld, double* out, std::int64_t stride));
TESSERA_CUDA_FN(void reduce_col_groups_fused(CUstream_st* stream, const std::vector<Op>& ops,
                                             DType t, const void* a, std::int64_t rows,
                                             std::int64_t cols, std::int64_t ld, double* out,
                                             std::int64_t stride));

// out[i] = un-finalized row value r(i) (lane-tree sum for the Sum family), 0 <= i < rows.
TESSERA_CUDA_FN(void reduce_rows(CUstream_st* stream, Op op, DType t, const void* a,
                                 std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                 double* out));
// Column partials of consecutive kReduceBlockRows-row groups from row 0 (the last may be
// shorter): out[g*cols + j] = ascending fold of f(a[i][j]) over group g's rows.
TESSERA_CUDA_FN(void reduce_col_groups(CUstream_st* stream, Op op, DType t, const void* a,
                                       std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                       double* out));
// acc[j] = acc[j] ⊕ f(a[i][j]) for i = 0 … rows-1 in order (continues a column fold).
TESSERA_CUDA_FN(void fold_rows(CUstream_st* stream, Op op, DType t, const void* a,
                               std::int64_t rows, std::int64_t cols, std::int64_t ld, double* acc));
// Folds the column partials groups[g*cols + j], g = 0 … ngroups-1, whose first is global block
// `first`, into the running fold (total, open) of the canonical order, as cpu::fold_partials
// does (the same bits): device arrays of cols doubles each. `scratch`: device room for
// (ngroups / kReduceSuperBlocks + 1) * cols doubles.
TESSERA_CUDA_FN(void fold_col_groups(CUstream_st* stream, Op op, const double* groups,
                                     std::int64_t ngroups, std::int64_t first, std::int64_t cols,
                                     double* total, double* open, double* scratch));

// v[i] = identity of op (0, +inf for Min, -inf for Max) for 0 <= i < n.
TESSERA_CUDA_FN(void fill_identity(CUstream_st* stream, Op op, double* v, std::int64_t n));
// In place: Mean divides by count, Norm2 takes the square root, other ops are unchanged.
TESSERA_CUDA_FN(void finalize(CUstream_st* stream, Op op, double* v, std::int64_t n, double count));

} // namespace tessera::cuda
