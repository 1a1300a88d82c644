// Pieces shared by the `tessera bench --backend cuda` drivers (bench_cuda.cpp for one rank,
// bench_cuda_dist.cpp for the distributed plans): the benchmark matrix, uploads, sampled checks
// of a transpose wherever it lives, reduction checks, timing helpers and report assembly.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "app/bench.hpp"
#include "app/bench_common.hpp"
#include "core/timers.hpp"
#include "cuda/stream.hpp"

struct CUstream_st;

namespace tessera::app::bench_cuda {

using bench::all_ranks;
using bench::gather_phases;
using bench::max_over_ranks;
using bench::op_list;
using bench::sum_over_ranks;
using bench::value;
using bench::zero_parallel;

// Writes rows [row0, row0 + nrows) of the benchmark matrix (cols wide) to `dst`, device or host
// memory, through a host panel of at most 64 MiB.
template <class T>
void upload_rows(void* dst, std::int64_t row0, std::int64_t nrows, std::int64_t cols);
extern template void upload_rows<float>(void*, std::int64_t, std::int64_t, std::int64_t);
extern template void upload_rows<double>(void*, std::int64_t, std::int64_t, std::int64_t);
extern template void upload_rows<std::complex<float>>(void*, std::int64_t, std::int64_t,
                                                      std::int64_t);
extern template void upload_rows<std::complex<double>>(void*, std::int64_t, std::int64_t,
                                                       std::int64_t);

// What a sampled check of a transpose looked at.
struct Sample {
  bool ok = true;
  std::int64_t rows = 0, elements = 0;
  std::string description() const; // "yes (64 sampled rows, 1048576 elements)"
};
// Checks sampled rows [row0 + r] (0 <= r < nrows) of the transposed matrix (out_cols wide) held
// in `out` (device or host memory): up to 64 rows, the first and the last among them, each
// compared over up to 65536 consecutive columns with the benchmark matrix.
Sample check_transposed(DType t, const void* out, std::int64_t row0, std::int64_t nrows,
                        std::int64_t out_cols);

// Compares reduction results (one vector per op) with the serial reference on the whole matrix,
// regenerated on rank 0 when it fits in 1 GiB; every rank gets the verdict.
std::string check_reduction(const BenchArgs& args, const std::vector<std::vector<double>>& got);

// Seconds of the work `f` queues on `s`, from CUDA events around it.
class EventTimer {
public:
  template <class F>
  double time(CUstream_st* s, const F& f) {
    start_.record(s);
    f();
    stop_.record(s);
    stop_.synchronize();
    return static_cast<double>(cuda::Event::elapsed_ms(start_, stop_)) * 1e-3;
  }

private:
  cuda::Event start_, stop_;
};

// Backend, device name, shape and repeat counts filled in.
BenchReport base_report(const BenchArgs& args, int nranks);
// Median, GB/s, reference GB/s (reference_bytes per reference run) and the fraction.
void finish_rates(BenchReport& r, const std::vector<double>& kernel,
                  const std::vector<double>& reference, double reference_bytes);

// Several ranks (or `exchange`): the distributed plans with the CUDA backend (bench_cuda_dist.cpp).
BenchReport distributed_transpose_cuda(const BenchArgs& args);
BenchReport distributed_reduce_cuda(const BenchArgs& args);

} // namespace tessera::app::bench_cuda
