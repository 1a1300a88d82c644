// The CUDA engine of the distributed reductions (contract: mpi/reduce_engine.hpp): the cuda::
// kernels of the canonical order on the piece, results copied to the host.
//
// Device-resident blocks (config.memory == Device) are read in place. Host-resident blocks are
// streamed through the GPU in chunks of whole 64-row groups on two streams: while one chunk is
// reduced the next is copied in. Column folds continue across chunks on the device, so the
// order of the additions is the canonical one whatever the chunk size. Several ops read each
// chunk once (the fused kernels of cuda/reduce.hpp).
#include <algorithm>

#include "core/throw.hpp"
#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "cuda/reduce.hpp"
#include "cuda/stream.hpp"
#include "mpi/reduce_engine.hpp"

namespace tessera {

namespace {

// Rows per host chunk: whole 64-row groups, about 256 MiB.
std::int64_t chunk_rows(std::int64_t cols, std::size_t elem) {
  const std::int64_t bytes_per_group =
      std::max<std::int64_t>(cols, 1) * 64 * static_cast<std::int64_t>(elem);
  return 64 * std::max<std::int64_t>(1, (std::int64_t{256} << 20) / bytes_per_group);
}

class CudaReduceEngine final : public ReduceEngine {
public:
  explicit CudaReduceEngine(const ReduceEngineConfig& c)
      : dtype_(c.dtype), elem_(dtype_size(c.dtype)), memory_(c.memory), pool_(2) {
    cuda::ensure_device_bound();
  }

  void reduce_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                   double* out) override {
    if (rows == 0)
      return;
    results_.reserve(8 * static_cast<std::size_t>(rows));
    for_chunks(a, rows, cols, [&](const void* d, std::int64_t r0, std::int64_t n, CUstream_st* s) {
      cuda::reduce_rows(s, op, dtype_, d, n, cols, cols, results_.as<double>() + r0);
    });
    cuda::copy(out, results_.data(), 8 * static_cast<std::size_t>(rows));
  }

  void reduce_col_groups(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                         double* out) override {
    if (rows == 0 || cols == 0)
      return;
    const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
    results_.reserve(8 * static_cast<std::size_t>(groups * cols));
    // Chunks start on group boundaries, so chunk-local groups are global ones.
    for_chunks(a, rows, cols, [&](const void* d, std::int64_t r0, std::int64_t n, CUstream_st* s) {
      cuda::reduce_col_groups(s, op, dtype_, d, n, cols, cols,
                              results_.as<double>() + (r0 / kReduceBlockRows) * cols);
    });
    cuda::copy(out, results_.data(), 8 * static_cast<std::size_t>(groups * cols));
  }

  // Several ops from one read of each chunk (cuda::reduce_rows_fused): the results hold one slot
  // of `rows` values per kind of op, copied out op by op.
  void reduce_rows_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                         std::int64_t cols, double* const* out) override {
    if (ops.size() <= 1 || rows == 0 || cols == 0) {
      ReduceEngine::reduce_rows_multi(ops, a, rows, cols, out);
      return;
    }
    const auto slots = static_cast<std::size_t>(cuda::reduce_fused_slots(ops));
    results_.reserve(8 * slots * static_cast<std::size_t>(rows));
    for_chunks(a, rows, cols, [&](const void* d, std::int64_t r0, std::int64_t n, CUstream_st* s) {
      cuda::reduce_rows_fused(s, ops, dtype_, d, n, cols, cols, results_.as<double>() + r0, rows);
    });
    for (std::size_t k = 0; k < ops.size(); ++k)
      cuda::copy(out[k], results_.as<double>() + cuda::reduce_fused_slot(ops, ops[k]) * rows,
                 8 * static_cast<std::size_t>(rows));
  }

  // Column partials of several ops from one read (cuda::reduce_col_groups_fused).
  void reduce_col_groups_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                               std::int64_t cols, double* const* out) override {
    if (ops.size() <= 1 || rows == 0 || cols == 0) {
      ReduceEngine::reduce_col_groups_multi(ops, a, rows, cols, out);
      return;
    }
    const std::int64_t stride = col_groups_fused(ops, a, rows, cols, results_);
    for (std::size_t k = 0; k < ops.size(); ++k)
      cuda::copy(out[k], results_.as<double>() + cuda::reduce_fused_slot(ops, ops[k]) * stride,
                 8 * static_cast<std::size_t>(stride));
  }

  // The partials stay on the device; fold_kept_col_groups folds them there
  // (cuda::fold_col_groups, in the canonical order) and copies back only the folded columns.
  void keep_col_groups_multi(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                             std::int64_t cols) override {
    dev_kept_ops_ = ops;
    dev_kept_groups_ = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
    dev_kept_cols_ = cols;
    if (rows == 0 || cols == 0)
      return;
    dev_kept_stride_ = col_groups_fused(ops, a, rows, cols, dev_kept_);
  }

  void fold_kept_col_groups(std::size_t k, double* total, double* open,
                            std::int64_t first) override {
    TESSERA_REQUIRE(k < dev_kept_ops_.size(), InternalError,
                    "fold_kept_col_groups: op {} of {} kept", k, dev_kept_ops_.size());
    if (dev_kept_groups_ == 0 || dev_kept_cols_ == 0)
      return;
    // total, open, then the scratch of fold_col_groups.
    const std::int64_t cols = dev_kept_cols_;
    const auto bytes = 8 * static_cast<std::size_t>(cols);
    results_.reserve(bytes * static_cast<std::size_t>(3 + dev_kept_groups_ / kReduceSuperBlocks));
    double* dev_total = results_.as<double>();
    double* dev_open = dev_total + cols;
    cuda::copy(dev_total, total, bytes);
    cuda::copy(dev_open, open, bytes);
    const Op op = dev_kept_ops_[k];
    cuda::fold_col_groups(pool_[0], op,
                          dev_kept_.as<double>() +
                              cuda::reduce_fused_slot(dev_kept_ops_, op) * dev_kept_stride_,
                          dev_kept_groups_, first, cols, dev_total, dev_open, dev_open + cols);
    pool_.synchronize();
    cuda::copy(total, dev_total, bytes);
    cuda::copy(open, dev_open, bytes);
  }

  void fold_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols, double* acc) override {
    if (rows == 0 || cols == 0)
      return;
    results_.reserve(8 * static_cast<std::size_t>(cols));
    cuda::copy(results_.data(), acc, 8 * static_cast<std::size_t>(cols));
    // The fold is sequential over rows: chunks run in order (for_chunks orders the kernels).
    for_chunks(a, rows, cols, [&](const void* d, std::int64_t, std::int64_t n, CUstream_st* s) {
      cuda::fold_rows(s, op, dtype_, d, n, cols, cols, results_.as<double>());
    });
    cuda::copy(acc, results_.data(), 8 * static_cast<std::size_t>(cols));
  }

private:
  // Every op's column partials from one read into `into` (cuda::reduce_col_groups_fused, or the
  // single-op kernel): one slot per kind of op, slot s at s * stride, which this returns.
  std::int64_t col_groups_fused(const std::vector<Op>& ops, const void* a, std::int64_t rows,
                                std::int64_t cols, cuda::DeviceBuffer& into) {
    const std::int64_t stride = (rows + kReduceBlockRows - 1) / kReduceBlockRows * cols;
    const auto slots = static_cast<std::size_t>(cuda::reduce_fused_slots(ops));
    into.reserve(8 * slots * static_cast<std::size_t>(stride));
    for_chunks(a, rows, cols, [&](const void* d, std::int64_t r0, std::int64_t n, CUstream_st* s) {
      double* out = into.as<double>() + (r0 / kReduceBlockRows) * cols;
      if (ops.size() == 1) // the single-op kernel; one op's slot is slot 0
        cuda::reduce_col_groups(s, ops[0], dtype_, d, n, cols, cols, out);
      else
        cuda::reduce_col_groups_fused(s, ops, dtype_, d, n, cols, cols, out, stride);
    });
    return stride;
  }

  // Calls kernel(device_rows, first_row, rows, stream) over the block: once on the block itself
  // when it is device memory, else chunk by chunk through two device slots. Kernels run in chunk
  // order (each waits for the previous one); returns when all are done.
  template <class K>
  void for_chunks(const void* a, std::int64_t rows, std::int64_t cols, K&& kernel) {
    if (memory_ == Memory::Device) {
      cuda::wait_for_default_stream(); // the caller's kernels may still be writing `a`
      kernel(a, 0, rows, pool_[0]);
      pool_.synchronize();
      return;
    }
    const std::int64_t step = std::min(rows, chunk_rows(cols, elem_));
    const std::size_t slot = static_cast<std::size_t>(step * cols) * elem_;
    staging_.reserve(2 * slot);
    cuda::Event done_prev(false);
    bool have_prev = false;
    for (std::int64_t r0 = 0, k = 0; r0 < rows; r0 += step, ++k) {
      const std::int64_t n = std::min(step, rows - r0);
      CUstream_st* s = pool_[static_cast<int>(k)];
      void* d = static_cast<char*>(staging_.data()) + (k % 2) * slot;
      cuda::copy_async(s, d,
                       static_cast<const char*>(a) + static_cast<std::size_t>(r0 * cols) * elem_,
                       static_cast<std::size_t>(n * cols) * elem_);
      if (have_prev)
        done_prev.wait_on(s);
      kernel(d, r0, n, s);
      done_prev = cuda::Event(false);
      done_prev.record(s);
      have_prev = true;
    }
    pool_.synchronize();
  }

  DType dtype_;
  std::size_t elem_;
  Memory memory_;
  cuda::StreamPool pool_;
  cuda::DeviceBuffer staging_; // two chunk slots (host-resident data)
  cuda::DeviceBuffer results_; // row values, group partials or the column accumulator
  // keep_col_groups_multi's partials, in the slots of col_groups_fused.
  cuda::DeviceBuffer dev_kept_;
  std::vector<Op> dev_kept_ops_;
  std::int64_t dev_kept_groups_ = 0, dev_kept_cols_ = 0, dev_kept_stride_ = 0;
};

} // namespace

std::unique_ptr<ReduceEngine> make_cuda_reduce_engine(const ReduceEngineConfig& config) {
  TESSERA_REQUIRE(cuda::compiled(), NotCompiled,
                  "the CUDA backend was not compiled into this build of tessera");
  TESSERA_REQUIRE(config.dtype == DType::f32 || config.dtype == DType::f64, InputError,
                  "reductions take f32 or f64 data, not {}", dtype_name(config.dtype));
  return std::make_unique<CudaReduceEngine>(config);
}

} // namespace tessera
