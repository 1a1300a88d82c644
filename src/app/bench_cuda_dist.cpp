// `tessera bench --backend cuda` over several ranks (and `exchange` at any rank count): the
// distributed TransposePlan and ReducePlan with the CUDA backend, on device memory (default) or
// pinned host memory (--memory host). Each repeat starts after a barrier and ends after a device
// synchronisation; its time is the slowest rank's.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "app/bench_cuda_util.hpp"
#include "core/block_distribution.hpp"
#include "core/timers.hpp"
#include "cuda/buffer.hpp"
#include "cuda/stream.hpp"
#include "mpi/agreement.hpp"
#include "mpi/reduce_plan.hpp"
#include "mpi/transpose_plan.hpp"

namespace tessera::app::bench_cuda {

namespace {

// A rank's block: device memory or pinned host memory.
struct Block {
  cuda::DeviceBuffer device;
  cuda::PinnedBuffer host;
  void* data() const noexcept { return device.data() != nullptr ? device.data() : host.data(); }
};

Block allocate(Memory memory, std::size_t bytes) {
  Block b;
  if (bytes == 0)
    return b;
  if (memory == Memory::Device)
    b.device = cuda::DeviceBuffer(bytes);
  else
    b.host = cuda::PinnedBuffer(bytes);
  return b;
}

// Times `kernel` and `reference` alternately, each after a barrier and until the device is idle;
// the slowest rank's time.
struct PairTimes {
  std::vector<double> kernel, reference;
};
template <class Kernel, class Reference, class AfterWarmup>
PairTimes time_pair(MPI_Comm comm, int warmup, int repeat, const Kernel& kernel,
                    const Reference& reference, const AfterWarmup& after_warmup) {
  for (int w = 0; w < warmup; ++w) {
    reference();
    kernel();
  }
  cuda::device_synchronize();
  after_warmup();
  PairTimes t;
  const auto timed = [&](const auto& f) {
    MPI_Barrier(comm);
    const double t0 = wall_seconds();
    f();
    cuda::device_synchronize();
    return max_over_ranks(comm, wall_seconds() - t0);
  };
  for (int r = 0; r < repeat; ++r) {
    t.reference.push_back(timed(reference));
    t.kernel.push_back(timed(kernel));
  }
  return t;
}

} // namespace

BenchReport distributed_transpose_cuda(const BenchArgs& args) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(args.comm, &rank);
  MPI_Comm_size(args.comm, &nranks);
  BenchReport r = base_report(args, nranks);
  const BlockDistribution dist({args.rows, args.cols}, nranks);
  const BlockDistribution tdist = dist.transposed();
  const std::size_t es = dtype_size(args.dtype);
  const std::size_t in_bytes = static_cast<std::size_t>(dist.local_size(rank)) * es;
  const std::size_t out_bytes = static_cast<std::size_t>(tdist.local_size(rank)) * es;
  PhaseTimers timers;
  TransposeOptions options;
  options.algorithm = parse_exchange(args.algorithm);
  options.memory = args.memory;
  options.timers = &timers;
  TransposePlan plan(dist, args.dtype, args.comm, Backend::Cuda, options);
  Block in, out, copy_dst;
  mpi::collectively(args.comm, [&] {
    in = allocate(args.memory, in_bytes);
    out = allocate(args.memory, out_bytes);
    copy_dst = allocate(args.memory, in_bytes);
  });
  if (args.shared_input)
    r.notes.push_back("--shared-input ignored: it applies to the CPU backend");
  dispatch_dtype(args.dtype, [&](auto tag) {
    upload_rows<decltype(tag)>(in.data(), dist.begin(rank), dist.rows(rank), args.cols);
  });
  const cuda::unique_stream stream = cuda::make_stream();
  CUstream_st* s = stream.get();
  if (out_bytes > 0)
    cuda::memset_async(s, out.data(), 0, out_bytes);
  if (in_bytes > 0)
    cuda::memset_async(s, copy_dst.data(), 0, in_bytes);
  cuda::synchronize(s);
  r.bytes_per_rank = max_over_ranks(args.comm, static_cast<double>(in_bytes + out_bytes));
  r.bytes_total = 2.0 * static_cast<double>(args.rows) * static_cast<double>(args.cols) *
                  static_cast<double>(es);
  // The copy ceiling: every rank copies its own block (device to device, or host to host for
  // --memory host) at the same time.
  const auto t = time_pair(
      args.comm, std::max(1, args.warmup), args.repeat,
      [&] { plan.execute(static_cast<const void*>(in.data()), out.data()); },
      [&] {
        if (in_bytes > 0)
          cuda::copy_async(s, copy_dst.data(), in.data(), in_bytes);
      },
      [&] { timers.clear(); });
  r.algorithm = std::string(exchange_name(plan.algorithm()));
  r.what = fmt::format("transpose (distributed, {})", r.algorithm);
  r.reference = "copy";
  finish_rates(r, t.kernel, t.reference,
               sum_over_ranks(args.comm, 2.0 * static_cast<double>(in_bytes)));
  r.phases = gather_phases(args.comm, timers, args.repeat);
  if (args.check) {
    if (out_bytes > 0) {
      cuda::memset_async(s, out.data(), 0xff, out_bytes); // NaNs: unwritten elements fail
      cuda::synchronize(s);
    }
    plan.execute(static_cast<const void*>(in.data()), out.data());
    cuda::device_synchronize();
    const Sample sample =
        check_transposed(args.dtype, out.data(), tdist.begin(rank), tdist.rows(rank), args.rows);
    r.checked = all_ranks(args.comm, sample.ok) ? fmt::format("{} per rank", sample.description())
                                                : "MISMATCH";
  } else {
    r.checked = "no (skipped)";
  }
  if (options.algorithm == Exchange::Auto)
    r.notes.push_back("exchange algorithm chosen by a timed trial during warm-up");
  return r;
}

BenchReport distributed_reduce_cuda(const BenchArgs& args) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(args.comm, &rank);
  MPI_Comm_size(args.comm, &nranks);
  BenchReport r = base_report(args, nranks);
  r.what = fmt::format("reduce {} over {} (distributed)", op_list(args.ops), axis_name(args.axis));
  const BlockDistribution dist({args.rows, args.cols}, nranks);
  const std::size_t bytes =
      static_cast<std::size_t>(dist.local_size(rank)) * dtype_size(args.dtype);
  PhaseTimers timers;
  ReduceOptions options;
  options.memory = args.memory;
  options.timers = &timers;
  ReducePlan plan(dist, args.dtype, args.comm, Backend::Cuda, args.ops, args.axis, options);
  Block in;
  cuda::DeviceBuffer scratch;
  mpi::collectively(args.comm, [&] {
    in = allocate(args.memory, bytes);
    scratch = cuda::DeviceBuffer(bytes);
  });
  dispatch_real_dtype(args.dtype, [&](auto tag) {
    upload_rows<decltype(tag)>(in.data(), dist.begin(rank), dist.rows(rank), args.cols);
  });
  r.bytes_per_rank = max_over_ranks(args.comm, plan.bytes_read());
  r.bytes_total = sum_over_ranks(args.comm, plan.bytes_read());
  const cuda::unique_stream stream = cuda::make_stream();
  CUstream_st* s = stream.get();
  ReduceResult result;
  // The ceiling: every rank copies its block once (device to device, or host to device for
  // --memory host), at the same time.
  const auto t = time_pair(
      args.comm, args.warmup, args.repeat, [&] { result = plan.execute(in.data()); },
      [&] {
        if (bytes > 0)
          cuda::copy_async(s, scratch.data(), in.data(), bytes);
      },
      [&] { timers.clear(); });
  r.reference = "copy";
  // A copy reads and writes each byte; the reductions only read.
  finish_rates(r, t.kernel, t.reference,
               sum_over_ranks(args.comm, 2.0 * static_cast<double>(bytes)));
  r.phases = gather_phases(args.comm, timers, args.repeat);
  if (args.check) {
    result = plan.execute(in.data());
    r.checked = check_reduction(args, result.values);
  } else {
    r.checked = "no (skipped)";
  }
  return r;
}

} // namespace tessera::app::bench_cuda
