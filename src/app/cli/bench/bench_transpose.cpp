// `tessera bench transpose|exchange` on the CPU kernel (one rank) and the distributed
// TransposePlan with either backend (several ranks, or `exchange`), each beside the copy of the
// same bytes measured in the same run: memcpy on the CPU, a device (or pinned host) copy with
// CUDA. The CUDA single-rank drivers live in bench_cuda.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include "cli/bench/bench_common.hpp"
#include "cli/bench/bench_cuda_util.hpp"
#include "cli/bench/bench_drivers.hpp"
#include "core/block_distribution.hpp"
#include "core/timers.hpp"
#include "cpu/transpose.hpp"
#include "cpu/transpose_tuner.hpp"
#include "cuda/buffer.hpp"
#include "cuda/stream.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"
#include "mpi/transpose_plan.hpp"

namespace tessera::app::bench {

namespace {

// Checks 4096 random elements (the first and the last among them) of rows [row0, row0 + nrows)
// of the transposed (cols x rows) matrix held in host memory at `out`; true when all match.
template <class T>
bool transposed_rows_match(const T* out, std::int64_t row0, std::int64_t nrows,
                           std::int64_t out_cols) {
  if (nrows == 0 || out_cols == 0)
    return true;
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<std::int64_t> ri(0, nrows - 1), rj(0, out_cols - 1);
  for (int s = 0; s < 4096; ++s) {
    const std::int64_t r = s == 0 ? 0 : (s == 1 ? nrows - 1 : ri(rng));
    const std::int64_t c = s == 0 ? 0 : (s == 1 ? out_cols - 1 : rj(rng));
    const T want = value<T>(c, row0 + r); // out(row0 + r, c) = A(c, row0 + r)
    if (std::memcmp(&out[r * out_cols + c], &want, sizeof(T)) != 0)
      return false;
  }
  return true;
}

bool host_rows_match(DType t, const void* out, std::int64_t row0, std::int64_t nrows,
                     std::int64_t out_cols) {
  return dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    return transposed_rows_match(static_cast<const T*>(out), row0, nrows, out_cols);
  });
}

} // namespace

BenchReport local_transpose_cpu(const BenchArgs& args) {
  BenchReport r = base_report(args, 1);
  r.what = "transpose (local kernel)";
  const std::size_t n = static_cast<std::size_t>(args.rows) * static_cast<std::size_t>(args.cols);
  const std::size_t bytes = n * dtype_size(args.dtype);
  Block in, out;
  mpi::collectively(args.comm, [&] {
    in = allocate(args, bytes);
    out = allocate(args, bytes);
  });
  dispatch_dtype(args.dtype, [&](auto tag) {
    fill_rows(static_cast<decltype(tag)*>(in.data()), 0, args.rows, args.cols);
  });
  zero_parallel(out.data(), bytes);
  r.bytes_per_rank = r.bytes_total = 2.0 * static_cast<double>(bytes);
  const auto run = [&] {
    cpu::transpose(args.dtype, in.data(), out.data(), args.rows, args.cols, args.cols, args.rows);
  };
  const bool cached = 2 * bytes <= cpu::last_level_cache_bytes();
  const auto t = time_pair(
      args, args.warmup, run, [&] { cpu::parallel_copy(in.data(), out.data(), bytes); }, [] {},
      cached);
  r.reference = "memcpy";
  finish_rates(r, t.kernel, t.reference, r.bytes_total);
  if (args.check) {
    run();
    const bool ok = host_rows_match(args.dtype, out.data(), 0, args.cols, args.rows);
    r.checked = ok ? "yes (4096 sampled elements)" : "MISMATCH";
  } else {
    r.checked = "no (skipped)";
  }
  return r;
}

BenchReport distributed_transpose(const BenchArgs& args) {
  const bool gpu = args.backend == Backend::Cuda;
  const int rank = mpi::comm_rank(args.comm);
  const int nranks = mpi::comm_size(args.comm);
  BenchReport r = base_report(args, nranks);
  const BlockDistribution dist({args.rows, args.cols}, nranks);
  const BlockDistribution tdist = dist.transposed();
  const std::size_t es = dtype_size(args.dtype);
  const std::size_t in_bytes = static_cast<std::size_t>(dist.local_size(rank)) * es;
  const std::size_t out_bytes = static_cast<std::size_t>(tdist.local_size(rank)) * es;
  PhaseTimers timers;
  TransposeOptions options;
  options.algorithm = parse_exchange(args.algorithm);
  if (gpu)
    options.memory = args.memory;
  options.timers = &timers;
  TransposePlan plan(dist, args.dtype, args.comm, args.backend, options);
  Block in, out, copy_dst;
  mpi::collectively(args.comm, [&] {
    in = allocate(args, in_bytes);
    out = allocate(args, out_bytes);
    copy_dst = allocate(args, in_bytes);
  });
  // --shared-input: the input block lives in the plan's node-shared buffer, which lets the plan
  // transpose straight out of the other ranks' blocks.
  void* src = in.data();
  if (args.shared_input && gpu) {
    r.notes.push_back("--shared-input ignored: it applies to the CPU backend");
  } else if (args.shared_input) {
    void* shared = plan.input_buffer();
    if (all_ranks(args.comm, shared != nullptr || in_bytes == 0))
      src = shared != nullptr ? shared : src;
    else
      r.notes.push_back("--shared-input ignored: the plan has no node-shared input buffer here");
  }
  dispatch_dtype(args.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (gpu)
      bench_cuda::upload_rows<T>(src, dist.begin(rank), dist.rows(rank), args.cols);
    else
      fill_rows(static_cast<T*>(src), dist.begin(rank), dist.rows(rank), args.cols);
  });
  const cuda::unique_stream stream = gpu ? cuda::make_stream() : cuda::unique_stream{};
  CUstream_st* s = stream.get();
  if (gpu) {
    if (out_bytes > 0)
      cuda::memset_async(s, out.data(), 0, out_bytes);
    if (in_bytes > 0)
      cuda::memset_async(s, copy_dst.data(), 0, in_bytes);
    cuda::synchronize(s);
  } else {
    zero_parallel(out.data(), out_bytes);
    zero_parallel(copy_dst.data(), in_bytes);
  }
  r.bytes_per_rank = max_over_ranks(args.comm, static_cast<double>(in_bytes + out_bytes));
  r.bytes_total = 2.0 * static_cast<double>(args.rows) * static_cast<double>(args.cols) *
                  static_cast<double>(es);
  // The copy ceiling: every rank copies its own block at the same time (host to host, or device
  // to device on the GPU).
  const auto execute = [&] { plan.execute(static_cast<const void*>(src), out.data()); };
  const auto t = time_pair(
      args, std::max(1, args.warmup), execute,
      [&] {
        if (!gpu)
          cpu::parallel_copy(src, copy_dst.data(), in_bytes);
        else if (in_bytes > 0)
          cuda::copy_async(s, copy_dst.data(), src, in_bytes);
      },
      [&] { timers.clear(); });
  const std::string algorithm(exchange_name(plan.algorithm()));
  if (gpu)
    r.algorithm = algorithm;
  r.what = fmt::format("transpose (distributed, {})", algorithm);
  r.reference = gpu ? "copy" : "memcpy";
  finish_rates(r, t.kernel, t.reference,
               sum_over_ranks(args.comm, 2.0 * static_cast<double>(in_bytes)));
  r.phases = gather_phases(args.comm, timers, args.repeat);
  if (!args.check) {
    r.checked = "no (skipped)";
  } else if (gpu) {
    if (out_bytes > 0) {
      cuda::memset_async(s, out.data(), 0xff, out_bytes); // NaNs: unwritten elements fail
      cuda::synchronize(s);
    }
    execute();
    cuda::device_synchronize();
    const bench_cuda::Sample sample = bench_cuda::check_transposed(
        args.dtype, out.data(), tdist.begin(rank), tdist.rows(rank), args.rows);
    r.checked = all_ranks(args.comm, sample.ok) ? fmt::format("{} per rank", sample.description())
                                                : "MISMATCH";
  } else {
    execute();
    const bool ok =
        host_rows_match(args.dtype, out.data(), tdist.begin(rank), tdist.rows(rank), args.rows);
    r.checked = all_ranks(args.comm, ok) ? "yes (4096 sampled elements per rank)" : "MISMATCH";
  }
  if (options.algorithm == Exchange::Auto)
    r.notes.push_back("exchange algorithm chosen by a timed trial during warm-up");
  return r;
}

} // namespace tessera::app::bench
