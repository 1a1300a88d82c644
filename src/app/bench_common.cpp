// The pieces both `tessera bench` drivers share (see bench_common.hpp).
#include "app/bench_common.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "core/reduction.hpp"
#include "mpi/collectives.hpp"

namespace tessera::app::bench {

void zero_parallel(void* p, std::size_t bytes) {
  auto* b = static_cast<unsigned char*>(p);
  const auto lines = static_cast<std::int64_t>((bytes + 4095) / 4096);
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < lines; ++k) {
    const auto begin = static_cast<std::size_t>(k) * 4096;
    std::memset(b + begin, 0, std::min<std::size_t>(4096, bytes - begin));
  }
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

} // namespace tessera::app::bench
