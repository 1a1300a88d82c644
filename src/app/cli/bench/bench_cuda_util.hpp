// Pieces of the `tessera bench --backend cuda` drivers (bench_cuda.cpp for one rank, the
// distributed drivers of bench_transpose.cpp and bench_reduce.cpp): uploads of the benchmark
// matrix, sampled checks of a transpose wherever it lives, CUDA-event timing, the device name.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cli/bench/bench.hpp"
#include "cli/bench/bench_common.hpp"
#include "core/timers.hpp"
#include "cuda/stream.hpp"

struct CUstream_st;

namespace tessera::app::bench_cuda {

using bench::all_ranks;
using bench::base_report;
using bench::check_reduction;
using bench::finish_rates;
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

// The contenders timed alternately on `s` (so that clock or thermal changes during the run affect
// all alike): `warmup` rounds untimed, then `repeat` rounds; seconds per contender, in order.
using TimedRuns = std::vector<std::pair<std::string, std::function<void()>>>;
std::vector<std::vector<double>> time_alternately(CUstream_st* s, const TimedRuns& runs, int warmup,
                                                  int repeat);

// "NAME (GPU i)" of this rank's GPU; with several ranks, how rank 0's node shares its GPUs.
std::string device_description(const BenchArgs& args, int nranks);

} // namespace tessera::app::bench_cuda
