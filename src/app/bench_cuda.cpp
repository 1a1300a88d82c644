// `tessera bench --backend cuda`: the CUDA kernels (one rank, device-resident data), host data
// staged through the GPU (one rank, --memory host), and the distributed plans with the CUDA
// backend (several ranks, or `exchange`), each beside a ceiling measured in the same run: a
// device-to-device copy of the same bytes, cuBLAS geam, cub::DeviceReduce::Sum, or the slowest
// stage of the host pipeline run alone. Timing uses CUDA events on one rank; with several ranks,
// the wall clock after a barrier and a device synchronisation, slowest rank's time.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "app/bench.hpp"
#include "app/bench_cuda_ref.hpp"
#include "app/bench_cuda_util.hpp"
#include "core/block_distribution.hpp"
#include "core/throw.hpp"
#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "cuda/reduce.hpp"
#include "cuda/staged.hpp"
#include "cuda/stream.hpp"
#include "cuda/transpose.hpp"
#include "mpi/agreement.hpp"

namespace tessera::app {

namespace {

using namespace bench_cuda;

// ---- transpose, one rank, device memory: the kernel, a D2D copy and cuBLAS geam ----------

BenchReport local_transpose_device(const BenchArgs& args) {
  BenchReport r = base_report(args, 1);
  r.what = "transpose (local kernel)";
  r.memory = "device";
  const std::size_t bytes = static_cast<std::size_t>(args.rows) *
                            static_cast<std::size_t>(args.cols) * dtype_size(args.dtype);
  cuda::DeviceBuffer in, out;
  mpi::collectively(args.comm, [&] {
    in = cuda::DeviceBuffer(bytes);
    out = cuda::DeviceBuffer(bytes);
  });
  dispatch_dtype(args.dtype,
                 [&](auto tag) { upload_rows<decltype(tag)>(in.data(), 0, args.rows, args.cols); });
  const cuda::unique_stream stream = cuda::make_stream();
  CUstream_st* s = stream.get();
  cuda::memset_async(s, out.data(), 0, bytes);
  std::unique_ptr<cuda_ref::Geam> geam;
  if (cuda_ref::Geam::supports(args.rows, args.cols))
    geam = std::make_unique<cuda_ref::Geam>(s);
  else
    r.notes.push_back("cuBLAS geam skipped: its dimensions are int");

  const auto kernel = [&] {
    cuda::transpose(s, args.dtype, in.data(), out.data(), args.rows, args.cols);
  };
  const auto copy = [&] { cuda::copy_async(s, out.data(), in.data(), bytes); };
  const auto run_geam = [&] {
    geam->transpose(args.dtype, in.data(), out.data(), args.rows, args.cols);
  };
  for (int w = 0; w < args.warmup; ++w) {
    kernel();
    copy();
    if (geam)
      run_geam();
  }
  cuda::synchronize(s);
  // Alternating, so that clock or thermal changes during the run affect all three alike.
  EventTimer timer;
  std::vector<double> t_kernel, t_copy, t_geam;
  for (int k = 0; k < args.repeat; ++k) {
    t_copy.push_back(timer.time(s, copy));
    t_kernel.push_back(timer.time(s, kernel));
    if (geam)
      t_geam.push_back(timer.time(s, run_geam));
  }
  r.bytes_per_rank = r.bytes_total = 2.0 * static_cast<double>(bytes);
  r.reference = "copy";
  finish_rates(r, t_kernel, t_copy, r.bytes_total);
  if (geam) {
    const double geam_median = summarize(t_geam).median;
    const double geam_gbps = geam_median > 0 ? r.bytes_total / geam_median * 1e-9 : 0.0;
    r.extras.emplace_back("geam_gbps", geam_gbps);
    r.extras.emplace_back("geam_fraction", r.reference_gbps > 0 ? geam_gbps / r.reference_gbps : 0);
    r.notes.push_back(fmt::format("cuBLAS geam (alpha 1, beta 0): {:.2f} GB/s; tessera is {:.2f}x "
                                  "geam",
                                  geam_gbps, geam_gbps > 0 ? r.gbps / geam_gbps : 0.0));
  }
  if (args.check) {
    // 0xff bytes are NaNs: an element the kernel leaves unwritten cannot match.
    cuda::memset_async(s, out.data(), 0xff, bytes);
    kernel();
    cuda::synchronize(s);
    const Sample sample = check_transposed(args.dtype, out.data(), 0, args.cols, args.rows);
    r.checked = sample.ok ? sample.description() : "MISMATCH";
    if (geam) {
      cuda::memset_async(s, out.data(), 0xff, bytes);
      run_geam();
      cuda::synchronize(s);
      if (!check_transposed(args.dtype, out.data(), 0, args.cols, args.rows).ok)
        r.notes.push_back("cuBLAS geam's result differs from the expected transpose");
    }
  } else {
    r.checked = "no (skipped)";
  }
  return r;
}

// ---- transpose, one rank, pinned host memory: StagedTranspose ---------------------------------

BenchReport local_transpose_staged(const BenchArgs& args) {
  BenchReport r = base_report(args, 1);
  r.what = "transpose (host memory staged through the GPU)";
  r.memory = "host";
  const std::size_t bytes = static_cast<std::size_t>(args.rows) *
                            static_cast<std::size_t>(args.cols) * dtype_size(args.dtype);
  cuda::PinnedBuffer in, out;
  mpi::collectively(args.comm, [&] {
    in = cuda::PinnedBuffer(bytes);
    out = cuda::PinnedBuffer(bytes);
  });
  dispatch_dtype(args.dtype,
                 [&](auto tag) { upload_rows<decltype(tag)>(in.data(), 0, args.rows, args.cols); });
  zero_parallel(out.data(), bytes);
  cuda::StreamPool pool;
  cuda::StagedTranspose staged(pool);
  const auto run = [&] {
    return staged.run(args.dtype, in.data(), out.data(), args.rows, args.cols);
  };
  for (int w = 0; w < args.warmup; ++w)
    run();
  std::vector<double> total, h2d, kernel, d2h;
  int chunks = 0;
  for (int k = 0; k < args.repeat; ++k) {
    total.push_back(run().total);
    const cuda::StagedTimes p =
        staged.phases(args.dtype, in.data(), out.data(), args.rows, args.cols);
    h2d.push_back(p.h2d);
    kernel.push_back(p.kernel);
    d2h.push_back(p.d2h);
    chunks = p.chunks;
  }
  const double b = static_cast<double>(bytes);
  r.phases = {{"h2d (alone)", summarize(h2d).median, b},
              {"kernel (alone)", summarize(kernel).median, 2 * b},
              {"d2h (alone)", summarize(d2h).median, b}};
  const double slowest = std::max({r.phases[0].seconds, r.phases[1].seconds, r.phases[2].seconds});
  r.bytes_per_rank = r.bytes_total = 2 * b;
  r.reference = "slowest phase";
  r.time = summarize(total);
  r.gbps = r.time.median > 0 ? r.bytes_total / r.time.median * 1e-9 : 0.0;
  r.gbps_per_rank = r.gbps;
  r.reference_gbps = slowest > 0 ? r.bytes_total / slowest * 1e-9 : 0.0;
  r.fraction = r.reference_gbps > 0 ? r.gbps / r.reference_gbps : 0.0;
  const double ratio = slowest > 0 ? r.time.median / slowest : 0.0;
  r.extras.emplace_back("total_over_slowest_phase", ratio);
  r.extras.emplace_back("chunks", chunks);
  r.extras.emplace_back("streams", pool.size());
  r.notes.push_back(fmt::format("pipelined total / slowest phase alone = {:.2f} (1.00: the copies "
                                "and the kernel overlap perfectly); {} chunks on {} streams",
                                ratio, chunks, pool.size()));
  if (args.check) {
    std::memset(out.data(), 0xff, bytes);
    run();
    const Sample sample = check_transposed(args.dtype, out.data(), 0, args.cols, args.rows);
    r.checked = sample.ok ? sample.description() : "MISMATCH";
  } else {
    r.checked = "no (skipped)";
  }
  return r;
}

// ---- reductions, one rank, device memory: the kernels beside cub::DeviceReduce::Sum ------------

BenchReport local_reduce_device(const BenchArgs& args) {
  BenchReport r = base_report(args, 1);
  r.what =
      fmt::format("reduce {} over {} (local kernels)", op_list(args.ops), axis_name(args.axis));
  r.memory = "device";
  const std::int64_t n = args.rows * args.cols;
  const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(args.dtype);
  const std::int64_t len =
      args.axis == Axis::All ? 1 : (args.axis == Axis::Rows ? args.rows : args.cols);
  const std::size_t nops = args.ops.size();
  cuda::DeviceBuffer a, results, cub_out;
  mpi::collectively(args.comm, [&] {
    a = cuda::DeviceBuffer(bytes);
    results = cuda::DeviceBuffer(nops * static_cast<std::size_t>(len) * sizeof(double));
    cub_out = cuda::DeviceBuffer(16);
  });
  const cuda::unique_stream stream = cuda::make_stream();
  CUstream_st* s = stream.get();
  cuda::ReduceWorkspace ws;
  ws.reserve(s, args.axis, args.rows, args.cols);
  cuda_ref::CubSum cub(s, args.dtype, n);
  dispatch_real_dtype(
      args.dtype, [&](auto tag) { upload_rows<decltype(tag)>(a.data(), 0, args.rows, args.cols); });
  const auto kernels = [&] {
    for (std::size_t k = 0; k < nops; ++k)
      cuda::reduce(s, args.ops[k], args.axis, args.dtype, a.data(), args.rows, args.cols, args.cols,
                   results.as<double>() + k * static_cast<std::size_t>(len), ws);
  };
  const auto reference = [&] { cub.run(a.data(), cub_out.data()); };
  for (int w = 0; w < args.warmup; ++w) {
    reference();
    kernels();
  }
  cuda::synchronize(s);
  EventTimer timer;
  std::vector<double> t_kernel, t_cub;
  for (int k = 0; k < args.repeat; ++k) {
    t_cub.push_back(timer.time(s, reference));
    t_kernel.push_back(timer.time(s, kernels));
  }
  r.bytes_per_rank = r.bytes_total = static_cast<double>(bytes) * static_cast<double>(nops);
  r.reference = "cub";
  finish_rates(r, t_kernel, t_cub, static_cast<double>(bytes));
  r.extras.emplace_back("cub_gbps", r.reference_gbps);
  r.notes.push_back("cub::DeviceReduce::Sum reads the matrix once and sums in its own type (not "
                    "reproducible); tessera's sums are bit-identical to the CPU backend");
  if (args.check) {
    kernels();
    cuda::synchronize(s);
    std::vector<std::vector<double>> got(nops, std::vector<double>(static_cast<std::size_t>(len)));
    for (std::size_t k = 0; k < nops; ++k)
      cuda::copy(got[k].data(), results.as<double>() + k * static_cast<std::size_t>(len),
                 static_cast<std::size_t>(len) * sizeof(double));
    r.checked = check_reduction(args, got);
  } else {
    r.checked = "no (skipped)";
  }
  return r;
}

} // namespace

BenchReport run_cuda_bench(const BenchArgs& args) {
  if (!cuda::compiled())
    TESSERA_THROW(NotCompiled, "the CUDA benchmark is not available in this build (built "
                               "without CUDA)");
  int nranks = 1;
  MPI_Comm_size(args.comm, &nranks);
  mpi::collectively(args.comm, [] { cuda::ensure_device_bound(); });
  switch (args.kind) {
  case BenchKind::Transpose:
    if (nranks > 1)
      return bench_cuda::distributed_transpose_cuda(args);
    return args.memory == Memory::Device ? local_transpose_device(args)
                                         : local_transpose_staged(args);
  case BenchKind::Exchange:
    return bench_cuda::distributed_transpose_cuda(args);
  case BenchKind::Reduce:
    break;
  }
  return nranks == 1 && args.memory == Memory::Device ? local_reduce_device(args)
                                                      : bench_cuda::distributed_reduce_cuda(args);
}

} // namespace tessera::app
