// `tessera bench permute`: the permutation of dimensions of one array (--shape, --axes) beside a
// copy of the same bytes, in the same process, alternating: on the CPU cpu::permute beside a
// parallel memcpy, on the GPU cuda::permute beside a device-to-device copy (CUDA events). The
// result is checked once after timing against cpu::permute on the host, byte for byte.
#include <fmt/format.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cli/bench/bench_common.hpp"
#include "cli/bench/bench_cuda_util.hpp"
#include "cli/bench/bench_drivers.hpp"
#include "core/aligned_buffer.hpp"
#include "core/dtype.hpp"
#include "core/permute_layout.hpp"
#include "cpu/permute.hpp"
#include "cpu/reference.hpp"
#include "cpu/transpose.hpp"
#include "cpu/transpose_tuner.hpp"
#include "cuda/buffer.hpp"
#include "cuda/permute.hpp"
#include "cuda/stream.hpp"
#include "mpi/agreement.hpp"

namespace tessera::app::bench {

namespace {

std::size_t array_bytes(const BenchArgs& args) {
  std::size_t n = dtype_size(args.dtype);
  for (const std::int64_t l : args.shape)
    n *= static_cast<std::size_t>(l);
  return n;
}

// Input bytes that differ almost everywhere (any element type: bytes are moved, not read).
void fill_bytes(void* p, std::size_t bytes) {
  auto* b = static_cast<unsigned char*>(p);
  const auto n = static_cast<std::int64_t>(bytes);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const auto h = static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ull;
    b[i] = static_cast<unsigned char>(h >> 56);
  }
}

BenchReport permute_report(const BenchArgs& args) {
  BenchReport r = base_report(args, 1);
  r.what = "permute (local kernel)";
  r.shape = args.shape;
  r.axes = args.axes;
  r.bytes_per_rank = r.bytes_total = 2.0 * static_cast<double>(array_bytes(args));
  return r;
}

} // namespace

BenchReport local_permute_cpu(const BenchArgs& args) {
  BenchReport r = permute_report(args);
  const std::size_t bytes = array_bytes(args), esize = dtype_size(args.dtype);
  AlignedBuffer in, out;
  mpi::collectively(args.comm, [&] {
    in = AlignedBuffer(bytes, "the benchmark's input");
    out = AlignedBuffer(bytes, "the benchmark's output");
  });
  fill_bytes(in.data(), bytes);
  zero_parallel(out.data(), bytes);
  const auto run = [&] { cpu::permute(in.data(), out.data(), esize, args.shape, args.axes); };
  const bool cached = 2 * bytes <= cpu::last_level_cache_bytes();
  const auto t = time_pair(
      args, args.warmup, run, [&] { cpu::parallel_copy(in.data(), out.data(), bytes); }, [] {},
      cached);
  r.reference = "memcpy";
  finish_rates(r, t.kernel, t.reference, r.bytes_total);
  if (args.check) {
    run();
    AlignedBuffer want(bytes, "the benchmark's reference");
    reference::permute(in.data(), want.data(), esize, args.shape, args.axes);
    r.checked =
        std::memcmp(want.data(), out.data(), bytes) == 0 ? "yes (every element)" : "MISMATCH";
  } else {
    r.checked = "no (skipped)";
  }
  return r;
}

BenchReport local_permute_device(const BenchArgs& args) {
  BenchReport r = permute_report(args);
  r.memory = "device";
  const std::size_t bytes = array_bytes(args), esize = dtype_size(args.dtype);
  cuda::DeviceBuffer in, out;
  mpi::collectively(args.comm, [&] {
    in = cuda::DeviceBuffer(bytes);
    out = cuda::DeviceBuffer(bytes);
  });
  {
    AlignedBuffer host(bytes, "the benchmark's input");
    fill_bytes(host.data(), bytes);
    cuda::copy(in.data(), host.data(), bytes);
  }
  const cuda::unique_stream stream = cuda::make_stream();
  CUstream_st* s = stream.get();
  cuda::memset_async(s, out.data(), 0, bytes);
  r.kernel = cuda::permute_kernel(esize, args.shape, args.axes);
  const std::function<void()> runs[2] = {
      [&] { cuda::permute(s, in.data(), out.data(), esize, args.shape, args.axes); },
      [&] { cuda::copy_async(s, out.data(), in.data(), bytes); }};
  for (int w = 0; w < args.warmup; ++w)
    for (const auto& f : runs)
      f();
  cuda::synchronize(s);
  // Alternating, so that clock or thermal changes during the run affect both alike.
  bench_cuda::EventTimer timer;
  std::vector<double> t[2];
  for (int k = 0; k < args.repeat; ++k)
    for (int i = 0; i < 2; ++i)
      t[i].push_back(timer.time(s, runs[i]));
  r.reference = "copy";
  finish_rates(r, t[0], t[1], r.bytes_total);
  r.extras.emplace_back("copy_gbps", r.reference_gbps);
  r.notes.push_back("kernel: " + r.kernel);
  if (args.check) {
    // 0xff everywhere first: an element the kernel leaves unwritten cannot match.
    cuda::memset_async(s, out.data(), 0xff, bytes);
    runs[0]();
    cuda::synchronize(s);
    AlignedBuffer host_in(bytes, "the benchmark's input"), want(bytes, "the reference"),
        got(bytes, "the result");
    cuda::copy(host_in.data(), in.data(), bytes);
    cuda::copy(got.data(), out.data(), bytes);
    cpu::permute(host_in.data(), want.data(), esize, args.shape, args.axes);
    r.checked = std::memcmp(want.data(), got.data(), bytes) == 0
                    ? "yes (every element, against cpu::permute)"
                    : "MISMATCH";
  } else {
    r.checked = "no (skipped)";
  }
  return r;
}

} // namespace tessera::app::bench
