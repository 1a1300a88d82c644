// The pieces both `tessera bench` drivers share (see bench_common.hpp).
#include "cli/bench/bench_common.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "cli/bench/bench_cuda_util.hpp"
#include "core/reduction.hpp"
#include "cpu/reference.hpp"
#include "cuda/stream.hpp"
#include "mpi/collectives.hpp"
#include "mpi/communicator.hpp"

namespace tessera::app {

BenchTiming summarize(std::vector<double> seconds) {
  BenchTiming t;
  if (seconds.empty())
    return t;
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  t.median = n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
  t.min = seconds.front();
  t.max = seconds.back();
  return t;
}

namespace bench {

void zero_parallel(void* p, std::size_t bytes) {
  auto* b = static_cast<unsigned char*>(p);
  const auto lines = static_cast<std::int64_t>((bytes + 4095) / 4096);
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < lines; ++k) {
    const auto begin = static_cast<std::size_t>(k) * 4096;
    std::memset(b + begin, 0, std::min<std::size_t>(4096, bytes - begin));
  }
}

void* Block::data() const noexcept {
  if (aligned.data() != nullptr)
    return aligned.data();
  return device.data() != nullptr ? device.data() : pinned.data();
}

Block allocate(const BenchArgs& args, std::size_t bytes) {
  Block b;
  if (args.backend == Backend::Cpu)
    b.aligned = AlignedBuffer(bytes, "a benchmark buffer");
  else if (bytes == 0)
    return b;
  else if (args.memory == Memory::Device)
    b.device = cuda::DeviceBuffer(bytes);
  else
    b.pinned = cuda::PinnedBuffer(bytes);
  return b;
}

PairTimes time_pair(const BenchArgs& args, int warmup, const std::function<void()>& kernel,
                    const std::function<void()>& reference,
                    const std::function<void()>& after_warmup, bool settle) {
  const bool gpu = args.backend == Backend::Cuda;
  for (int w = 0; w < warmup; ++w) {
    reference();
    kernel();
  }
  if (gpu)
    cuda::device_synchronize();
  after_warmup();
  PairTimes t;
  const auto timed = [&](const std::function<void()>& f) {
    if (settle)
      f();
    mpi::barrier(args.comm);
    const double t0 = wall_seconds();
    f();
    if (gpu)
      cuda::device_synchronize();
    return max_over_ranks(args.comm, wall_seconds() - t0);
  };
  for (int r = 0; r < args.repeat; ++r) {
    t.reference.push_back(timed(reference));
    t.kernel.push_back(timed(kernel));
  }
  return t;
}

BenchReport base_report(const BenchArgs& args, int nranks) {
  BenchReport r;
  r.threads = omp_get_max_threads();
  if (args.backend == Backend::Cuda) {
    r.backend = "cuda";
    r.device = bench_cuda::device_description(args, nranks);
    r.memory = args.memory == Memory::Device ? "device" : "host";
  } else {
    r.backend = "cpu";
    r.device = fmt::format("{} OpenMP thread{} per rank", r.threads, r.threads == 1 ? "" : "s");
  }
  r.rows = args.rows;
  r.cols = args.cols;
  r.dtype = args.dtype;
  r.ranks = nranks;
  r.repeat = args.repeat;
  r.warmup = args.warmup;
  return r;
}

void finish_rates(BenchReport& r, const std::vector<double>& kernel,
                  const std::vector<double>& reference, double reference_bytes) {
  r.time = summarize(kernel);
  r.gbps = r.time.median > 0 ? r.bytes_total / r.time.median * 1e-9 : 0.0;
  r.gbps_per_rank = r.gbps / r.ranks;
  const double ref_median = summarize(reference).median;
  r.reference_gbps = ref_median > 0 ? reference_bytes / ref_median * 1e-9 : 0.0;
  r.fraction = r.reference_gbps > 0 ? r.gbps / r.reference_gbps : 0.0;
}

std::string check_reduction(const BenchArgs& args, const std::vector<std::vector<double>>& got) {
  const int rank = mpi::comm_rank(args.comm);
  const std::size_t n = static_cast<std::size_t>(args.rows) * static_cast<std::size_t>(args.cols);
  if (n * dtype_size(args.dtype) > (std::size_t{1} << 30))
    return "no (matrix above 1 GiB)";
  // 2: bit-identical; 1: equal within 1e-12 relative (ops outside the Sum family may round
  // differently on the GPU); 0: mismatch.
  int verdict = 2;
  if (rank == 0) {
    dispatch_real_dtype(args.dtype, [&](auto tag) {
      using T = decltype(tag);
      std::vector<T> a(n);
      fill_rows(a.data(), 0, args.rows, args.cols);
      for (std::size_t k = 0; k < args.ops.size(); ++k) {
        const auto want = reference::reduce(args.ops[k], args.axis, a.data(), args.rows, args.cols);
        if (want.size() != got[k].size()) {
          verdict = 0;
          continue;
        }
        if (std::memcmp(want.data(), got[k].data(), want.size() * sizeof(double)) == 0)
          continue;
        if (args.backend == Backend::Cpu) {
          verdict = 0;
          continue;
        }
        for (std::size_t i = 0; i < want.size(); ++i)
          if (!(std::abs(want[i] - got[k][i]) <= 1e-12 * std::abs(want[i])) &&
              !(want[i] == got[k][i]))
            verdict = 0;
        verdict = std::min(verdict, 1);
      }
    });
  }
  mpi::broadcast(args.comm, verdict);
  return verdict == 2   ? "yes (bit-identical to the serial reference)"
         : verdict == 1 ? "yes (within 1e-12 of the serial reference)"
                        : "MISMATCH";
}

double max_over_ranks(MPI_Comm comm, double v) {
  return mpi::max_over_ranks(comm, v);
}
double sum_over_ranks(MPI_Comm comm, double v) {
  return mpi::sum_over_ranks(comm, v);
}
bool all_ranks(MPI_Comm comm, bool ok) {
  return mpi::all_ranks(comm, ok);
}

std::vector<BenchPhase> gather_phases(MPI_Comm comm, const PhaseTimers& timers, int repeat) {
  std::string mine;
  for (const auto& [name, stats] : timers.phases())
    mine += name + '\n';
  std::set<std::string> names;
  for (const std::string& theirs : mpi::allgather(comm, mine))
    for (std::size_t b = 0, e; (e = theirs.find('\n', b)) != std::string::npos; b = e + 1)
      names.insert(theirs.substr(b, e - b));
  std::vector<BenchPhase> out;
  for (const auto& name : names) { // the same sorted order on every rank
    const auto it = timers.phases().find(name);
    const double s = it == timers.phases().end() ? 0.0 : it->second.seconds;
    const double b = it == timers.phases().end() ? 0.0 : it->second.bytes;
    out.push_back({name, max_over_ranks(comm, s) / repeat, sum_over_ranks(comm, b) / repeat});
  }
  return out;
}

std::string op_list(const std::vector<Op>& ops) {
  std::string s;
  for (Op op : ops) {
    if (!s.empty())
      s += ',';
    s += op_name(op);
  }
  return s;
}

} // namespace bench

} // namespace tessera::app
