// `tessera bench --backend cpu`: the local OpenMP kernels (one rank) and the distributed plans on
// host memory (several ranks, or `exchange`), each beside the memcpy / read ceiling of the same
// bytes measured in the same run.
#include <omp.h>

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "app/bench.hpp"
#include "app/bench_common.hpp"
#include "core/aligned_buffer.hpp"
#include "core/block_distribution.hpp"
#include "core/throw.hpp"
#include "core/timers.hpp"
#include "cpu/reduce.hpp"
#include "cpu/reference.hpp"
#include "cpu/transpose.hpp"
#include "mpi/agreement.hpp"
#include "mpi/collectives.hpp"
#include "mpi/communicator.hpp"
#include "mpi/reduce_plan.hpp"
#include "mpi/transpose_plan.hpp"

namespace tessera::app {

namespace {

using bench::all_ranks;
using bench::gather_phases;
using bench::max_over_ranks;
using bench::op_list;
using bench::sum_over_ranks;
using bench::value;
using bench::zero_parallel;

// 64-byte aligned, uninitialised storage; pages are first touched by the threads that use them.
using Buffer = AlignedBuffer;

Buffer allocate(std::size_t bytes) {
  return Buffer(bytes, "a benchmark buffer");
}

// Rows [row0, row0 + nrows) of the global matrix, in parallel (first touch by the OpenMP threads).
template <class T>
void fill_rows(T* a, std::int64_t row0, std::int64_t nrows, std::int64_t cols) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < nrows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      a[i * cols + j] = value<T>(row0 + i, j);
}

// Checks `samples` random elements of rows [row0, row0 + nrows) of the transposed (cols x rows)
// matrix held in `out`; true when all match.
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

// Times `kernel` and `reference` alternately, so that a machine whose load changes during the run
// affects both alike. Each repeat starts after a barrier; its time is the slowest rank's.
struct PairTimes {
  std::vector<double> kernel, reference;
};
template <class Kernel, class Reference>
PairTimes time_pair(MPI_Comm comm, int warmup, int repeat, const Kernel& kernel,
                    const Reference& reference, const std::function<void()>& after_warmup) {
  for (int w = 0; w < warmup; ++w) {
    reference();
    kernel();
  }
  after_warmup();
  PairTimes t;
  const auto timed = [&](const auto& f) {
    mpi::barrier(comm);
    const double t0 = wall_seconds();
    f();
    return max_over_ranks(comm, wall_seconds() - t0);
  };
  for (int r = 0; r < repeat; ++r) {
    t.reference.push_back(timed(reference));
    t.kernel.push_back(timed(kernel));
  }
  return t;
}

BenchReport base_report(const BenchArgs& args, int nranks) {
  BenchReport r;
  r.backend = "cpu";
  r.threads = omp_get_max_threads();
  r.device = fmt::format("{} OpenMP thread{} per rank", r.threads, r.threads == 1 ? "" : "s");
  r.rows = args.rows;
  r.cols = args.cols;
  r.dtype = args.dtype;
  r.ranks = nranks;
  r.repeat = args.repeat;
  r.warmup = args.warmup;
  return r;
}

void finish_rates(BenchReport& r, const PairTimes& t, double reference_bytes) {
  r.time = summarize(t.kernel);
  r.gbps = r.time.median > 0 ? r.bytes_total / r.time.median * 1e-9 : 0.0;
  r.gbps_per_rank = r.gbps / r.ranks;
  const double ref_median = summarize(t.reference).median;
  r.reference_gbps = ref_median > 0 ? reference_bytes / ref_median * 1e-9 : 0.0;
  r.fraction = r.reference_gbps > 0 ? r.gbps / r.reference_gbps : 0.0;
}

// ---- transpose, one rank: the OpenMP kernel -------------------------------------------------

BenchReport local_transpose(const BenchArgs& args) {
  BenchReport r = base_report(args, 1);
  r.what = "transpose (local kernel)";
  const std::size_t n = static_cast<std::size_t>(args.rows) * static_cast<std::size_t>(args.cols);
  const std::size_t bytes = n * dtype_size(args.dtype);
  Buffer in, out;
  mpi::collectively(args.comm, [&] {
    in = allocate(bytes);
    out = allocate(bytes);
  });
  dispatch_dtype(args.dtype, [&](auto tag) {
    fill_rows(reinterpret_cast<decltype(tag)*>(in.data()), 0, args.rows, args.cols);
  });
  zero_parallel(out.data(), bytes);
  r.bytes_per_rank = r.bytes_total = 2.0 * static_cast<double>(bytes);
  const auto t = time_pair(
      args.comm, args.warmup, args.repeat,
      [&] {
        cpu::transpose(args.dtype, in.data(), out.data(), args.rows, args.cols, args.cols,
                       args.rows);
      },
      [&] { cpu::parallel_copy(in.data(), out.data(), bytes); }, [] {});
  r.reference = "memcpy";
  finish_rates(r, t, r.bytes_total);
  if (args.check) {
    cpu::transpose(args.dtype, in.data(), out.data(), args.rows, args.cols, args.cols, args.rows);
    const bool ok = dispatch_dtype(args.dtype, [&](auto tag) {
      using T = decltype(tag);
      return transposed_rows_match(reinterpret_cast<const T*>(out.data()), 0, args.cols, args.rows);
    });
    r.checked = ok ? "yes (4096 sampled elements)" : "MISMATCH";
  } else {
    r.checked = "no (skipped)";
  }
  return r;
}

// ---- transpose over ranks: TransposePlan ----------------------------------------------------

BenchReport distributed_transpose(const BenchArgs& args) {
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
  options.timers = &timers;
  TransposePlan plan(dist, args.dtype, args.comm, Backend::Cpu, options);
  Buffer in, out, copy_dst;
  mpi::collectively(args.comm, [&] {
    in = allocate(in_bytes);
    out = allocate(out_bytes);
    copy_dst = allocate(in_bytes);
  });
  // --shared-input: the input block lives in the plan's node-shared buffer, which lets the plan
  // transpose straight out of the other ranks' blocks.
  void* src = in.data();
  if (args.shared_input) {
    void* shared = plan.input_buffer();
    if (all_ranks(args.comm, shared != nullptr || in_bytes == 0))
      src = shared != nullptr ? shared : src;
    else
      r.notes.push_back("--shared-input ignored: the plan has no node-shared input buffer here");
  }
  dispatch_dtype(args.dtype, [&](auto tag) {
    fill_rows(static_cast<decltype(tag)*>(src), dist.begin(rank), dist.rows(rank), args.cols);
  });
  zero_parallel(out.data(), out_bytes);
  zero_parallel(copy_dst.data(), in_bytes);
  r.bytes_per_rank = max_over_ranks(args.comm, static_cast<double>(in_bytes + out_bytes));
  r.bytes_total = 2.0 * static_cast<double>(args.rows) * static_cast<double>(args.cols) * es;
  // The memcpy ceiling: every rank copies its own block at the same time.
  const auto t = time_pair(
      args.comm, std::max(1, args.warmup), args.repeat,
      [&] { plan.execute(static_cast<const void*>(src), static_cast<void*>(out.data())); },
      [&] { cpu::parallel_copy(src, copy_dst.data(), in_bytes); }, [&] { timers.clear(); });
  r.what = fmt::format("transpose (distributed, {})", exchange_name(plan.algorithm()));
  r.reference = "memcpy";
  finish_rates(r, t, sum_over_ranks(args.comm, 2.0 * static_cast<double>(in_bytes)));
  r.phases = gather_phases(args.comm, timers, args.repeat);
  if (args.check) {
    plan.execute(static_cast<const void*>(src), static_cast<void*>(out.data()));
    const bool ok = dispatch_dtype(args.dtype, [&](auto tag) {
      using T = decltype(tag);
      return transposed_rows_match(reinterpret_cast<const T*>(out.data()), tdist.begin(rank),
                                   tdist.rows(rank), args.rows);
    });
    r.checked = all_ranks(args.comm, ok) ? "yes (4096 sampled elements per rank)" : "MISMATCH";
  } else {
    r.checked = "no (skipped)";
  }
  if (options.algorithm == Exchange::Auto)
    r.notes.push_back("exchange algorithm chosen by a timed trial during warm-up");
  return r;
}

// ---- reductions, one rank: the OpenMP kernels in the canonical order ------------------------

// Whole finalized result of op over a rows x cols matrix from the local kernels; `scratch`
// holds max(rows, groups * cols) doubles.
template <class T>
std::vector<double> local_reduce(Op op, Axis axis, const T* a, std::int64_t rows, std::int64_t cols,
                                 std::vector<double>& scratch) {
  const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  if (axis == Axis::Rows) {
    std::vector<double> v(static_cast<std::size_t>(rows));
    cpu::reduce_rows(op, a, rows, cols, v.data());
    for (auto& x : v)
      x = cpu::finalize(op, x, static_cast<double>(cols));
    return v;
  }
  if (axis == Axis::All) {
    cpu::reduce_rows(op, a, rows, cols, scratch.data());
    double total = cpu::identity(op);
    for (std::int64_t g = 0; g < groups; ++g) {
      double p = cpu::identity(op);
      for (std::int64_t i = g * kReduceBlockRows; i < std::min(rows, (g + 1) * kReduceBlockRows);
           ++i)
        p = cpu::combine(op, p, scratch[static_cast<std::size_t>(i)]);
      total = cpu::combine(op, total, p);
    }
    return {cpu::finalize(op, total, static_cast<double>(rows) * static_cast<double>(cols))};
  }
  cpu::reduce_col_groups(op, a, rows, cols, scratch.data());
  std::vector<double> v(static_cast<std::size_t>(cols), cpu::identity(op));
  for (std::int64_t g = 0; g < groups; ++g)
    for (std::int64_t j = 0; j < cols; ++j)
      v[j] = cpu::combine(op, v[j], scratch[static_cast<std::size_t>(g * cols + j)]);
  for (auto& x : v)
    x = cpu::finalize(op, x, static_cast<double>(rows));
  return v;
}

// Compares results with the serial reference on the whole matrix, regenerated on rank 0 (when it
// fits in 1 GiB); every rank gets the verdict.
template <class T>
std::string check_reduction(const BenchArgs& args, const std::vector<std::vector<double>>& got) {
  const int rank = mpi::comm_rank(args.comm);
  const std::size_t n = static_cast<std::size_t>(args.rows) * static_cast<std::size_t>(args.cols);
  if (n * sizeof(T) > (std::size_t{1} << 30))
    return "no (matrix above 1 GiB)";
  int ok = 1;
  if (rank == 0) {
    std::vector<T> a(n);
    fill_rows(a.data(), 0, args.rows, args.cols);
    for (std::size_t k = 0; k < args.ops.size(); ++k) {
      const auto want = reference::reduce(args.ops[k], args.axis, a.data(), args.rows, args.cols);
      if (want.size() != got[k].size() ||
          std::memcmp(want.data(), got[k].data(), want.size() * sizeof(double)) != 0)
        ok = 0;
    }
  }
  mpi::broadcast(args.comm, ok);
  return ok ? "yes (bit-identical to the serial reference)" : "MISMATCH";
}

BenchReport local_reduce_bench(const BenchArgs& args) {
  BenchReport r = base_report(args, 1);
  r.what =
      fmt::format("reduce {} over {} (local kernels)", op_list(args.ops), axis_name(args.axis));
  const std::size_t n = static_cast<std::size_t>(args.rows) * static_cast<std::size_t>(args.cols);
  const std::size_t bytes = n * dtype_size(args.dtype);
  Buffer in;
  mpi::collectively(args.comm, [&] { in = allocate(bytes); });
  const std::int64_t groups = (args.rows + kReduceBlockRows - 1) / kReduceBlockRows;
  std::vector<double> scratch(static_cast<std::size_t>(std::max(args.rows, groups * args.cols)));
  r.bytes_per_rank = r.bytes_total = static_cast<double>(bytes) * args.ops.size();
  std::uint64_t sink = 0;
  dispatch_real_dtype(args.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* a = reinterpret_cast<const T*>(in.data());
    fill_rows(reinterpret_cast<T*>(in.data()), 0, args.rows, args.cols);
    std::vector<std::vector<double>> results(args.ops.size());
    const auto t = time_pair(
        args.comm, args.warmup, args.repeat,
        [&] {
          for (std::size_t k = 0; k < args.ops.size(); ++k)
            results[k] = local_reduce(args.ops[k], args.axis, a, args.rows, args.cols, scratch);
        },
        [&] {
          for (std::size_t k = 0; k < args.ops.size(); ++k)
            sink += cpu::parallel_read(in.data(), bytes);
        },
        [] {});
    r.reference = "read";
    finish_rates(r, t, r.bytes_total);
    r.checked = args.check ? check_reduction<T>(args, results) : "no (skipped)";
  });
  if (sink == 42) // keeps the reference reads observable
    r.notes.push_back("");
  return r;
}

// ---- reductions over ranks: ReducePlan ---------------------------------------------------------

BenchReport distributed_reduce_bench(const BenchArgs& args) {
  const int rank = mpi::comm_rank(args.comm);
  const int nranks = mpi::comm_size(args.comm);
  BenchReport r = base_report(args, nranks);
  r.what = fmt::format("reduce {} over {} (distributed)", op_list(args.ops), axis_name(args.axis));
  const BlockDistribution dist({args.rows, args.cols}, nranks);
  const std::size_t bytes =
      static_cast<std::size_t>(dist.local_size(rank)) * dtype_size(args.dtype);
  PhaseTimers timers;
  ReduceOptions options;
  options.timers = &timers;
  ReducePlan plan(dist, args.dtype, args.comm, Backend::Cpu, args.ops, args.axis, options);
  Buffer in;
  mpi::collectively(args.comm, [&] { in = allocate(bytes); });
  r.bytes_per_rank = max_over_ranks(args.comm, plan.bytes_read());
  r.bytes_total = sum_over_ranks(args.comm, plan.bytes_read());
  std::uint64_t sink = 0;
  dispatch_real_dtype(args.dtype, [&](auto tag) {
    using T = decltype(tag);
    fill_rows(reinterpret_cast<T*>(in.data()), dist.begin(rank), dist.rows(rank), args.cols);
    ReduceResult result;
    // The read ceiling: every rank streams its own block once, at the same time.
    const auto t = time_pair(
        args.comm, args.warmup, args.repeat, [&] { result = plan.execute(in.data()); },
        [&] { sink += cpu::parallel_read(in.data(), bytes); }, [&] { timers.clear(); });
    r.reference = "read";
    finish_rates(r, t, sum_over_ranks(args.comm, static_cast<double>(bytes)));
    r.phases = gather_phases(args.comm, timers, args.repeat);
    r.checked = args.check ? check_reduction<T>(args, result.values) : "no (skipped)";
  });
  if (sink == 42) // keeps the reference reads observable
    r.notes.push_back("");
  return r;
}

} // namespace

BenchReport run_cpu_bench(const BenchArgs& args) {
  const int nranks = mpi::comm_size(args.comm);
  switch (args.kind) {
  case BenchKind::Transpose:
    return nranks == 1 ? local_transpose(args) : distributed_transpose(args);
  case BenchKind::Exchange:
    return distributed_transpose(args);
  case BenchKind::Reduce:
    break;
  }
  return nranks == 1 ? local_reduce_bench(args) : distributed_reduce_bench(args);
}

} // namespace tessera::app
