// The OpenMP engine of the distributed reductions: the cpu:: kernels, typed once here.
#include "cpu/reduce.hpp"
#include "mpi/reduce_engine.hpp"

namespace tessera {

namespace {

template <class T>
class CpuReduceEngine final : public ReduceEngine {
public:
  void reduce_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                   double* out) override {
    cpu::reduce_rows(op, static_cast<const T*>(a), rows, cols, out);
  }
  void reduce_rows_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                         std::int64_t cols, double* const* out) override {
    cpu::reduce_rows_multi(ops.data(), ops.size(), static_cast<const T*>(a), rows, cols, out);
  }
  void reduce_col_groups(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                         double* out) override {
    cpu::reduce_col_groups(op, static_cast<const T*>(a), rows, cols, out);
  }
  void reduce_col_groups_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                               std::int64_t cols, double* const* out) override {
    cpu::reduce_col_groups_multi(ops.data(), ops.size(), static_cast<const T*>(a), rows, cols, out);
  }
  void fold_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols, double* acc) override {
    cpu::fold_rows(op, static_cast<const T*>(a), rows, cols, acc);
  }
};

} // namespace

std::unique_ptr<ReduceEngine> make_cpu_reduce_engine(const ReduceEngineConfig& config) {
  return dispatch_real_dtype(config.dtype, [](auto tag) -> std::unique_ptr<ReduceEngine> {
    return std::make_unique<CpuReduceEngine<decltype(tag)>>();
  });
}

} // namespace tessera
