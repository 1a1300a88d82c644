// What the `tessera bench` drivers of both backends share: the benchmark matrix, the buffers a
// rank benchmarks on, the alternating time loop, the reductions of timings over ranks, the
// report's common rows (shape, rates, phases), the reduction check and small formatting.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "cli/bench/bench.hpp"
#include "core/aligned_buffer.hpp"
#include "core/timers.hpp"
#include "cuda/buffer.hpp"

namespace tessera::app::bench {

// Element (i, j) of the benchmark matrix: cheap, exactly representable, different everywhere.
template <class T>
T value(std::int64_t i, std::int64_t j) {
  const auto h = static_cast<std::uint64_t>(i) * 1000003u + static_cast<std::uint64_t>(j) * 7919u;
  const double v = static_cast<double>(h % 65521u) - 32760.0;
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v);
  else
    return T(static_cast<typename T::value_type>(v), static_cast<typename T::value_type>(-v));
}

// Rows [row0, row0 + nrows) of the benchmark matrix into host memory, in parallel (first touch
// by the OpenMP threads).
template <class T>
void fill_rows(T* a, std::int64_t row0, std::int64_t nrows, std::int64_t cols) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < nrows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      a[i * cols + j] = value<T>(row0 + i, j);
}

// A rank's block: 64-byte aligned host memory (CPU backend; pages first touched by the threads
// that use them), device memory or pinned host memory (CUDA backend, by args.memory).
struct Block {
  AlignedBuffer aligned;
  cuda::DeviceBuffer device;
  cuda::PinnedBuffer pinned;
  void* data() const noexcept;
};
Block allocate(const BenchArgs& args, std::size_t bytes);

// Times `kernel` and `reference` alternately, so that a machine whose load (or clock) changes
// during the run affects both alike. Each repeat starts after a barrier; with the CUDA backend
// it ends when the device is idle; its time is the slowest rank's. `after_warmup` runs once
// between warm-up and timing. `settle`: each timed run follows an untimed run of the same
// function, so that it finds the cache as its own previous run left it (as repeated use does)
// and not as the other one left it; for working sets that fit in the cache, where a copy that
// leaves the output dirty in the cache slows a transpose with non-temporal stores, and the
// other way round.
struct PairTimes {
  std::vector<double> kernel, reference;
};
PairTimes time_pair(const BenchArgs& args, int warmup, const std::function<void()>& kernel,
                    const std::function<void()>& reference,
                    const std::function<void()>& after_warmup, bool settle = false);

// Backend, device, shape and repeat counts filled in.
BenchReport base_report(const BenchArgs& args, int nranks);
// Median, GB/s, reference GB/s (reference_bytes per reference run) and the fraction.
void finish_rates(BenchReport& r, const std::vector<double>& kernel,
                  const std::vector<double>& reference, double reference_bytes);

// Compares reduction results (one vector per op) with the serial reference on the whole matrix,
// regenerated on rank 0 when it fits in 1 GiB; every rank gets the verdict. The CPU backend must
// match bit for bit; the CUDA one may differ by 1e-12 relative outside the Sum family.
std::string check_reduction(const BenchArgs& args, const std::vector<std::vector<double>>& got);

// Zeroes `bytes` at `p` in 4 KiB pieces spread over the OpenMP threads (first touch).
void zero_parallel(void* p, std::size_t bytes);

double max_over_ranks(MPI_Comm comm, double v);
double sum_over_ranks(MPI_Comm comm, double v);
bool all_ranks(MPI_Comm comm, bool ok);

// Per-execute phase times (max over ranks) and bytes (sum over ranks), matched by name: every
// rank gets the same phases in the same order, also when some rank lacks one.
std::vector<BenchPhase> gather_phases(MPI_Comm comm, const PhaseTimers& timers, int repeat);

// "sum,max,norm2"
std::string op_list(const std::vector<Op>& ops);

} // namespace tessera::app::bench
