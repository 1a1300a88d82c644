// The backend half of a distributed reduction: the local kernels of the canonical order
// (core/reduction.hpp) on this rank's block. ReducePlan (mpi/reduce_plan.cpp) cuts the block at
// the global 64-row block boundaries, calls these on the pieces, and combines across ranks.
//
// `a` points at row 0 of a piece of the block: host memory for the CPU engine, device memory
// for the CUDA engine when ReduceOptions::memory is Device (the plan only offsets it by whole
// rows). Results are always written to host memory and complete when a call returns.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "core/reduction.hpp"

namespace tessera {

class ReduceEngine {
public:
  virtual ~ReduceEngine() = default;
  // The contracts of the cpu:: kernels of the same names (src/cpu/reduce.hpp): un-finalized
  // row values; column partials of consecutive 64-row groups from identity; a column fold
  // continued from acc.
  virtual void reduce_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                           double* out) = 0;
  // reduce_rows for each of ops, out[k] for ops[k], the same bits; engines that can read the
  // rows once for all ops override it (the default calls reduce_rows op by op).
  virtual void reduce_rows_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                                 std::int64_t cols, double* const* out);
  virtual void reduce_col_groups(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                                 double* out) = 0;
  // reduce_col_groups for each of ops, out[k] for ops[k], the same bits (the default calls
  // reduce_col_groups op by op).
  virtual void reduce_col_groups_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                                       std::int64_t cols, double* const* out);
  virtual void fold_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                         double* acc) = 0;
  // The column partials of reduce_col_groups_multi, kept by the engine (replacing what it kept
  // before) until fold_kept_col_groups folds them: the CUDA engine keeps them on the device and
  // folds them there, so that only `cols` values per op cross to the host instead of every
  // group's. The default keeps them in host memory.
  virtual void keep_col_groups_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                                     std::int64_t cols);
  // Folds the kept groups of the k-th op, whose first is global block `first`, into the running
  // fold (total, open): cpu::fold_partials of what reduce_col_groups_multi gives for it, the
  // same bits. total and open are host memory, cols values each.
  virtual void fold_kept_col_groups(std::size_t k, double* total, double* open, std::int64_t first);

private:
  std::vector<Op> kept_ops_;
  std::vector<std::vector<double>> kept_; // the default's kept partials, per op
  std::int64_t kept_groups_ = 0, kept_cols_ = 0;
};

struct ReduceEngineConfig {
  DType dtype = DType::f64; // f32 or f64
  Memory memory = Memory::Host;
};

std::unique_ptr<ReduceEngine> make_cpu_reduce_engine(const ReduceEngineConfig& config);
// mpi/reduce_cuda.cpp.
std::unique_ptr<ReduceEngine> make_cuda_reduce_engine(const ReduceEngineConfig& config);
// Picks by backend (never Auto here).
std::unique_ptr<ReduceEngine> make_reduce_engine(Backend backend, const ReduceEngineConfig& config);

} // namespace tessera
