// The cross-rank timing table: phase names are gathered from every rank (a phase may exist on
// some ranks only), then calls, times and bytes are reduced to rank 0 and formatted there.
#include "mpi/timing_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

#include "core/check.hpp"

namespace tessera::mpi {

namespace {

// Every rank's phase names, '\n'-separated, gathered everywhere so all ranks build the same
// sorted union and reduce arrays of the same length in the same order.
std::vector<std::string> union_of_names(const PhaseTimers& timers, MPI_Comm comm, int size) {
  std::string mine;
  for (const auto& [name, stats] : timers.phases()) {
    mine += name;
    mine += '\n';
  }
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size));
  CHECK_MPI(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm));
  std::vector<int> displs(static_cast<std::size_t>(size), 0);
  for (int r = 1; r < size; ++r)
    displs[r] = displs[r - 1] + lens[r - 1];
  std::string all(static_cast<std::size_t>(displs.back() + lens.back()), '\0');
  CHECK_MPI(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(),
                           MPI_CHAR, comm));
  std::set<std::string> names;
  std::size_t start = 0;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i] == '\n') {
      names.insert(all.substr(start, i - start));
      start = i + 1;
    }
  return {names.begin(), names.end()};
}

std::string format_seconds(double s) {
  return fmt::format("{:.6f}", s);
}

} // namespace

std::string timing_table(const PhaseTimers& timers, MPI_Comm comm) {
  int rank = 0, size = 1;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));
  const auto names = union_of_names(timers, comm, size);
  const std::size_t n = names.size();

  std::vector<double> seconds(n, 0.0), bytes(n, 0.0);
  std::vector<long long> calls(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const auto it = timers.phases().find(names[k]);
    if (it == timers.phases().end())
      continue; // missing here: zero time, zero calls
    seconds[k] = it->second.seconds;
    bytes[k] = it->second.bytes;
    calls[k] = it->second.calls;
  }
  std::vector<double> tmax(n), tmin(n), bsum(n);
  std::vector<long long> cmax(n);
  const int count = static_cast<int>(n);
  CHECK_MPI(MPI_Reduce(seconds.data(), tmax.data(), count, MPI_DOUBLE, MPI_MAX, 0, comm));
  CHECK_MPI(MPI_Reduce(seconds.data(), tmin.data(), count, MPI_DOUBLE, MPI_MIN, 0, comm));
  CHECK_MPI(MPI_Reduce(bytes.data(), bsum.data(), count, MPI_DOUBLE, MPI_SUM, 0, comm));
  CHECK_MPI(MPI_Reduce(calls.data(), cmax.data(), count, MPI_LONG_LONG, MPI_MAX, 0, comm));
  if (rank != 0)
    return "";

  std::size_t width = 5; // "phase"
  for (const auto& name : names)
    width = std::max(width, name.size());
  std::string out = fmt::format("{:<{}}  {:>8}  {:>14}  {:>9}  {:>9}\n", "phase", width, "calls",
                                "max time [s]", "imbalance", "GB/s");
  for (std::size_t k = 0; k < n; ++k) {
    // Imbalance is max/min over ranks: 1.00 is perfect; a rank that never ran the phase
    // (min = 0) makes it unbounded.
    std::string imbalance = "1.00";
    if (tmin[k] > 0.0)
      imbalance = fmt::format("{:.2f}", tmax[k] / tmin[k]);
    else if (tmax[k] > 0.0)
      imbalance = "inf";
    std::string rate = "-";
    if (bsum[k] > 0.0 && tmax[k] > 0.0)
      rate = fmt::format("{:.2f}", bsum[k] / tmax[k] / 1e9);
    out += fmt::format("{:<{}}  {:>8}  {:>14}  {:>9}  {:>9}\n", names[k], width, cmax[k],
                       format_seconds(tmax[k]), imbalance, rate);
  }
  return out;
}

} // namespace tessera::mpi
