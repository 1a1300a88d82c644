#include "mpi/reduce_engine.hpp"

#include "core/throw.hpp"

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
