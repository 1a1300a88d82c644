#include "mpi/reduce_engine.hpp"

#include "core/throw.hpp"
#include "cpu/reduce.hpp"

namespace tessera {

void ReduceEngine::reduce_rows_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                                     std::int64_t cols, double* const* out) {
  for (std::size_t k = 0; k < ops.size(); ++k)
    reduce_rows(ops[k], a, rows, cols, out[k]);
}

void ReduceEngine::reduce_col_groups_multi(const std::vector<Op>& ops, const void* a,
                                           std::int64_t rows, std::int64_t cols,
                                           double* const* out) {
  for (std::size_t k = 0; k < ops.size(); ++k)
    reduce_col_groups(ops[k], a, rows, cols, out[k]);
}

void ReduceEngine::keep_col_groups_multi(const std::vector<Op>& ops, const void* a,
                                         std::int64_t rows, std::int64_t cols) {
  kept_ops_ = ops;
  kept_groups_ = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  kept_cols_ = cols;
  kept_.resize(ops.size());
  std::vector<double*> out;
  for (auto& v : kept_) {
    v.assign(static_cast<std::size_t>(kept_groups_ * cols), 0.0);
    out.push_back(v.data());
  }
  if (rows > 0 && cols > 0)
    reduce_col_groups_multi(ops, a, rows, cols, out.data());
}

void ReduceEngine::fold_kept_col_groups(std::size_t k, double* total, double* open,
                                        std::int64_t first) {
  TESSERA_REQUIRE(k < kept_.size(), InternalError, "fold_kept_col_groups: op {} of {} kept", k,
                  kept_.size());
  cpu::fold_partials(kept_ops_[k], total, open, first, kept_[k].data(), kept_groups_, kept_cols_);
}

std::unique_ptr<ReduceEngine> make_reduce_engine(Backend backend,
                                                 const ReduceEngineConfig& config) {
  switch (backend) {
  case Backend::Cpu:
    TESSERA_REQUIRE(config.memory == Memory::Host, InputError,
                    "the CPU backend reduces host memory; device pointers need the CUDA backend");
    return make_cpu_reduce_engine(config);
  case Backend::Cuda:
    return make_cuda_reduce_engine(config);
  case Backend::Auto:
    break;
  }
  TESSERA_THROW(InternalError, "make_reduce_engine: the backend must be resolved first");
}

} // namespace tessera
