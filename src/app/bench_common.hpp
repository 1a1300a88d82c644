// What the `tessera bench` drivers of both backends share (bench_cpu.cpp, bench_cuda*.cpp): the
// benchmark matrix, the reductions of timings over ranks, the phase table and small formatting.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "app/bench.hpp"
#include "core/timers.hpp"

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
