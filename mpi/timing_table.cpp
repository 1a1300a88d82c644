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

struct Gathered {
  std::vector<std::string> names;
  std::vector<double> tmax, tmin, bsum;
  std::vector<long long> cmax;
};

// Collective; the values are rank 0's only.
Gathered gather(const PhaseTimers& timers, MPI_Comm comm, int& rank) {
  int size = 1;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));
  Gathered g;
  g.names = union_of_names(timers, comm, size);
  const auto& names = g.names;
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
  g.tmax.resize(n);
  g.tmin.resize(n);
  g.bsum.resize(n);
  g.cmax.resize(n);
  const int count = static_cast<int>(n);
  CHECK_MPI(MPI_Reduce(seconds.data(), g.tmax.data(), count, MPI_DOUBLE, MPI_MAX, 0, comm));
  CHECK_MPI(MPI_Reduce(seconds.data(), g.tmin.data(), count, MPI_DOUBLE, MPI_MIN, 0, comm));
  CHECK_MPI(MPI_Reduce(bytes.data(), g.bsum.data(), count, MPI_DOUBLE, MPI_SUM, 0, comm));
  CHECK_MPI(MPI_Reduce(calls.data(), g.cmax.data(), count, MPI_LONG_LONG, MPI_MAX, 0, comm));
  return g;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", c);
    else
      out += c;
  }
  return out + "\"";
}

} // namespace

std::string timing_table(const PhaseTimers& timers, MPI_Comm comm) {
  int rank = 0;
  const Gathered g = gather(timers, comm, rank);
  if (rank != 0)
    return "";
  const auto& names = g.names;
  const auto &tmax = g.tmax, &tmin = g.tmin, &bsum = g.bsum;
  const auto& cmax = g.cmax;
  const std::size_t n = names.size();

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

std::string timing_json(const PhaseTimers& timers, MPI_Comm comm) {
  int rank = 0;
  const Gathered g = gather(timers, comm, rank);
  if (rank != 0)
    return "";
  std::string out = "[";
  for (std::size_t k = 0; k < g.names.size(); ++k) {
    const double imbalance = g.tmin[k] > 0.0 ? g.tmax[k] / g.tmin[k] : 1.0;
    const bool unbounded = g.tmin[k] <= 0.0 && g.tmax[k] > 0.0;
    out += fmt::format(
        "{}{{\"phase\":{},\"calls\":{},\"max_s\":{:.9g},\"min_s\":{:.9g},"
        "\"imbalance\":{},\"bytes\":{:.17g},\"gbps\":{}}}",
        k ? "," : "", json_string(g.names[k]), g.cmax[k], g.tmax[k], g.tmin[k],
        unbounded ? std::string("null") : fmt::format("{:.6g}", imbalance), g.bsum[k],
        g.bsum[k] > 0.0 && g.tmax[k] > 0.0 ? fmt::format("{:.6g}", g.bsum[k] / g.tmax[k] / 1e9)
                                           : std::string("null"));
  }
  return out + "]";
}

} // namespace tessera::mpi
