// `tessera bench reduce` on the CPU kernels (one rank) and the distributed ReducePlan with either
// backend (several ranks), each beside a ceiling of the same bytes measured in the same run: a
// streaming read on the CPU, a device copy with CUDA. The CUDA single-rank driver lives in
// bench_cuda.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cli/bench/bench_common.hpp"
#include "cli/bench/bench_cuda_util.hpp"
#include "cli/bench/bench_drivers.hpp"
#include "core/block_distribution.hpp"
#include "core/timers.hpp"
#include "cpu/reduce.hpp"
#include "cpu/transpose.hpp"
#include "cuda/buffer.hpp"
#include "cuda/stream.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"
#include "mpi/reduce_plan.hpp"

namespace tessera::app::bench {

BenchReport local_reduce_cpu(const BenchArgs& args) {
  BenchReport r = base_report(args, 1);
  r.what =
      fmt::format("reduce {} over {} (local kernels)", op_list(args.ops), axis_name(args.axis));
  const std::size_t n = static_cast<std::size_t>(args.rows) * static_cast<std::size_t>(args.cols);
  const std::size_t bytes = n * dtype_size(args.dtype);
  Block in;
  mpi::collectively(args.comm, [&] { in = allocate(args, bytes); });
  std::vector<double> scratch; // grown by the first (warm-up) call to what the ops need
  // Every op from one read of the matrix (the several-op kernels): the bytes are read once,
  // and the ceiling is one read of them.
  r.bytes_per_rank = r.bytes_total = static_cast<double>(bytes);
  std::uint64_t sink = 0;
  dispatch_real_dtype(args.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* a = static_cast<const T*>(in.data());
    fill_rows(static_cast<T*>(in.data()), 0, args.rows, args.cols);
    // Kept across the timed calls, as a caller that reduces again and again keeps its results'
    // storage: each fresh result would be paid in page faults (72 MB a call along Rows of
    // 9000001 × 3), not in the kernels.
    std::vector<std::vector<double>> results;
    const auto t = time_pair(
        args, args.warmup,
        [&] {
          cpu::reduce_whole_multi(args.ops, args.axis, a, args.rows, args.cols, scratch, results);
        },
        [&] { sink += cpu::parallel_read(in.data(), bytes); }, [] {});
    r.reference = "read";
    finish_rates(r, t.kernel, t.reference, r.bytes_total);
    r.checked = args.check ? check_reduction(args, results) : "no (skipped)";
  });
  if (sink == 42) // keeps the reference reads observable
    r.notes.push_back("");
  return r;
}

BenchReport distributed_reduce(const BenchArgs& args) {
  const bool gpu = args.backend == Backend::Cuda;
  const int rank = mpi::comm_rank(args.comm);
  const int nranks = mpi::comm_size(args.comm);
  BenchReport r = base_report(args, nranks);
  r.what = fmt::format("reduce {} over {} (distributed)", op_list(args.ops), axis_name(args.axis));
  const BlockDistribution dist({args.rows, args.cols}, nranks);
  const std::size_t bytes =
      static_cast<std::size_t>(dist.local_size(rank)) * dtype_size(args.dtype);
  PhaseTimers timers;
  ReduceOptions options;
  if (gpu)
    options.memory = args.memory;
  options.timers = &timers;
  ReducePlan plan(dist, args.dtype, args.comm, args.backend, args.ops, args.axis, options);
  Block in;
  cuda::DeviceBuffer scratch; // the GPU ceiling's copy target
  mpi::collectively(args.comm, [&] {
    in = allocate(args, bytes);
    if (gpu)
      scratch = cuda::DeviceBuffer(bytes);
  });
  dispatch_real_dtype(args.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (gpu)
      bench_cuda::upload_rows<T>(in.data(), dist.begin(rank), dist.rows(rank), args.cols);
    else
      fill_rows(static_cast<T*>(in.data()), dist.begin(rank), dist.rows(rank), args.cols);
  });
  r.bytes_per_rank = max_over_ranks(args.comm, plan.bytes_read());
  r.bytes_total = sum_over_ranks(args.comm, plan.bytes_read());
  const cuda::unique_stream stream = gpu ? cuda::make_stream() : cuda::unique_stream{};
  CUstream_st* s = stream.get();
  ReduceResult result;
  std::uint64_t sink = 0;
  // The ceiling: every rank streams its own block once, at the same time (on the GPU a copy,
  // device to device or host to device for --memory host).
  const auto t = time_pair(
      args, args.warmup, [&] { result = plan.execute(in.data()); },
      [&] {
        if (!gpu)
          sink += cpu::parallel_read(in.data(), bytes);
        else if (bytes > 0)
          cuda::copy_async(s, scratch.data(), in.data(), bytes);
      },
      [&] { timers.clear(); });
  r.reference = gpu ? "copy" : "read";
  // A copy reads and writes each byte; the reductions only read.
  finish_rates(r, t.kernel, t.reference,
               sum_over_ranks(args.comm, (gpu ? 2.0 : 1.0) * static_cast<double>(bytes)));
  r.phases = gather_phases(args.comm, timers, args.repeat);
  if (args.check && gpu)
    result = plan.execute(in.data());
  r.checked = args.check ? check_reduction(args, result.values) : "no (skipped)";
  if (sink == 42) // keeps the reference reads observable
    r.notes.push_back("");
  return r;
}

} // namespace tessera::app::bench
