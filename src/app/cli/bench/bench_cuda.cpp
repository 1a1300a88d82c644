// `tessera bench --backend cuda` on one rank: the CUDA kernels (device-resident data) and host
// data staged through the GPU (--memory host), each beside a ceiling measured in the same run: a
// device-to-device copy of the same bytes, cuBLAS geam (loaded on first use), the textbook tile
// transpose, cub::DeviceReduce::Sum, or the slowest stage of the host pipeline run alone. Timing
// uses CUDA events. The distributed plans: bench_transpose.cpp and bench_reduce.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/cuda/reference.hpp"
#include "bench/cuda/transpose_variants.hpp"
#include "cli/bench/bench_cuda_util.hpp"
#include "cli/bench/bench_drivers.hpp"
#include "core/block_distribution.hpp"
#include "core/throw.hpp"
#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "cuda/reduce.hpp"
#include "cuda/staged.hpp"
#include "cuda/stream.hpp"
#include "cuda/transpose.hpp"
#include "mpi/agreement.hpp"

namespace tessera::app::bench {

using namespace bench_cuda;

namespace {

// ---- transpose, one rank, device memory: the kernel beside a D2D copy, cuBLAS geam and the
// textbook tile, all in the same process and alternating ----------------------------------------

// GB/s of `bytes` moved per run at the median of `seconds`.
double rate(const std::vector<double>& seconds, double bytes) {
  const double m = summarize(seconds).median;
  return m > 0 ? bytes / m * 1e-9 : 0.0;
}

} // namespace

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
  std::unique_ptr<cuda::bench_ref::Geam> geam;
  if (!cuda::bench_ref::Geam::supports(args.rows, args.cols))
    r.notes.push_back("cuBLAS geam skipped: its dimensions are int");
  else if (const std::string why = cuda::bench_ref::cublas_unavailable_reason(); !why.empty())
    r.notes.push_back("cuBLAS geam skipped: " + why);
  else
    geam = std::make_unique<cuda::bench_ref::Geam>(s);
  const bool tile = cuda::bench_ref::tile_supports(args.rows, args.cols);
  const int chosen = cuda::transpose_choice(args.dtype, in.data(), out.data(), args.rows, args.cols,
                                            args.cols, args.rows);
  r.kernel = cuda::transpose_variant_name(args.dtype, chosen);

  // The timed contenders: name, work; tessera's kernel first.
  TimedRuns runs;
  runs.emplace_back("tessera", [&] {
    cuda::transpose(s, args.dtype, in.data(), out.data(), args.rows, args.cols);
  });
  runs.emplace_back("copy", [&] { cuda::copy_async(s, out.data(), in.data(), bytes); });
  if (geam)
    runs.emplace_back(
        "geam", [&] { geam->transpose(args.dtype, in.data(), out.data(), args.rows, args.cols); });
  if (tile)
    runs.emplace_back("tile", [&] {
      cuda::bench_ref::tile_transpose(s, args.dtype, in.data(), out.data(), args.rows, args.cols);
    });
  if (args.variants) { // the choice table's kernels, then those kept for comparison only
    for (int v = 1; v < cuda::transpose_variant_count(); ++v)
      runs.emplace_back("variant " + cuda::transpose_variant_name(args.dtype, v), [&, v] {
        cuda::transpose_variant(s, args.dtype, v, in.data(), out.data(), args.rows, args.cols,
                                args.cols, args.rows);
      });
    for (int k = 0; k < cuda::bench_ref::transpose_comparison_count(); ++k)
      runs.emplace_back(
          "variant " + cuda::bench_ref::transpose_comparison_name(args.dtype, k), [&, k] {
            cuda::bench_ref::transpose_comparison(s, args.dtype, k, in.data(), out.data(),
                                                  args.rows, args.cols, args.cols, args.rows);
          });
  }
  const std::vector<std::vector<double>> t = time_alternately(s, runs, args.warmup, args.repeat);
  r.bytes_per_rank = r.bytes_total = 2.0 * static_cast<double>(bytes);
  r.reference = "copy";
  finish_rates(r, t[0], t[1], r.bytes_total);
  r.extras.emplace_back("copy_gbps", r.reference_gbps);
  for (std::size_t i = 2; i < runs.size(); ++i) {
    const double g = rate(t[i], r.bytes_total);
    const std::string& name = runs[i].first;
    r.extras.emplace_back(name + "_gbps", g);
    r.extras.emplace_back(name + "_fraction", r.reference_gbps > 0 ? g / r.reference_gbps : 0);
    if (name == "geam")
      r.notes.push_back(
          fmt::format("cuBLAS geam (alpha 1, beta 0): {:.2f} GB/s; tessera is {:.2f}x "
                      "geam",
                      g, g > 0 ? r.gbps / g : 0.0));
    else if (name == "tile")
      r.notes.push_back(fmt::format("textbook 32x32 tile, 32x8 threads: {:.2f} GB/s; tessera is "
                                    "{:.2f}x the tile",
                                    g, g > 0 ? r.gbps / g : 0.0));
  }
  r.notes.push_back("kernel: " + r.kernel);
  if (args.check) {
    // 0xff bytes are NaNs: an element a kernel leaves unwritten cannot match.
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].first == "copy")
        continue;
      cuda::memset_async(s, out.data(), 0xff, bytes);
      runs[i].second();
      cuda::synchronize(s);
      const Sample sample = check_transposed(args.dtype, out.data(), 0, args.cols, args.rows);
      if (i == 0)
        r.checked = sample.ok ? sample.description() : "MISMATCH";
      else if (!sample.ok && runs[i].first.rfind("variant ", 0) == 0)
        r.checked = "MISMATCH (" + runs[i].first + ")";
      else if (!sample.ok)
        r.notes.push_back(runs[i].first + "'s result differs from the expected transpose");
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
  const std::size_t chunk =
      args.chunk_bytes > 0 ? args.chunk_bytes : cuda::StagedTranspose::kDefaultChunkBytes;
  // What a run takes (mapped: one kernel over the link, for this pinned memory), and the staged
  // pipeline of copies beside it: its phases alone are the reference, its total a comparison.
  cuda::StagedTranspose chosen(pool, chunk);
  cuda::StagedTranspose staged(pool, chunk, cuda::StagedOutput::Copy);
  const auto run = [&] {
    return chosen.run(args.dtype, in.data(), out.data(), args.rows, args.cols);
  };
  const auto run_staged = [&] {
    return staged.run(args.dtype, in.data(), out.data(), args.rows, args.cols);
  };
  for (int w = 0; w < args.warmup; ++w) {
    run();
    run_staged();
  }
  std::vector<double> total, staged_total, h2d, kernel, d2h;
  int chunks = 0;
  bool mapped = false;
  for (int k = 0; k < args.repeat; ++k) {
    const cuda::StagedTimes t = run();
    total.push_back(t.total);
    mapped = t.mapped;
    staged_total.push_back(run_staged().total);
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
              {"d2h (alone)", summarize(d2h).median, b},
              {"staged pipeline", summarize(staged_total).median, 2 * b}};
  const double slowest = std::max({r.phases[0].seconds, r.phases[1].seconds, r.phases[2].seconds});
  r.bytes_per_rank = r.bytes_total = 2 * b;
  r.reference = "slowest phase";
  r.time = summarize(total);
  r.gbps = r.time.median > 0 ? r.bytes_total / r.time.median * 1e-9 : 0.0;
  r.gbps_per_rank = r.gbps;
  r.reference_gbps = slowest > 0 ? r.bytes_total / slowest * 1e-9 : 0.0;
  r.fraction = r.reference_gbps > 0 ? r.gbps / r.reference_gbps : 0.0;
  const double ratio = slowest > 0 ? r.time.median / slowest : 0.0;
  const double staged_ratio = slowest > 0 ? r.phases[3].seconds / slowest : 0.0;
  r.extras.emplace_back("total_over_slowest_phase", ratio);
  r.extras.emplace_back("staged_over_slowest_phase", staged_ratio);
  r.kernel = mapped ? "mapped" : "staged";
  r.extras.emplace_back("chunks", chunks);
  r.extras.emplace_back("streams", pool.size());
  r.notes.push_back(fmt::format(
      "{}: total / slowest phase of the staged copies alone = {:.2f}; the staged pipeline "
      "({} chunks on {} streams) {:.2f}",
      mapped ? "one kernel over the link (mapped host memory)" : "staged pipeline", ratio, chunks,
      pool.size(), staged_ratio));
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
  ws.reserve(s, args.axis, args.rows, args.cols, static_cast<int>(nops));
  cuda::bench_ref::CubSum cub(s, args.dtype, n);
  dispatch_real_dtype(
      args.dtype, [&](auto tag) { upload_rows<decltype(tag)>(a.data(), 0, args.rows, args.cols); });
  std::vector<double*> outs(nops);
  for (std::size_t k = 0; k < nops; ++k)
    outs[k] = results.as<double>() + k * static_cast<std::size_t>(len);
  // Every op from one pass over the data.
  const auto kernels = [&] {
    cuda::reduce_fused(s, args.ops, args.axis, args.dtype, a.data(), args.rows, args.cols,
                       args.cols, outs.data(), ws);
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
  // The data is read once for all the ops.
  r.bytes_per_rank = r.bytes_total = static_cast<double>(bytes);
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

} // namespace tessera::app::bench
