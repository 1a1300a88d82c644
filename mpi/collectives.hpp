// Collectives on plain values and vectors, typed through mpi_type<T>(): what code outside mpi/
// needs (a broadcast from rank 0, reductions over ranks, gathers, a token passed in rank order)
// without calling MPI itself. Every function throws MpiError when MPI fails (CHECK_MPI).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "core/check.hpp"
#include "mpi/mpi_type.hpp"

namespace tessera::mpi {

// Collective: rank 0's value on every rank.
template <class T>
void broadcast(MPI_Comm comm, T& value) {
  CHECK_MPI(MPI_Bcast(&value, 1, mpi_type<T>(), 0, comm));
}
void broadcast(MPI_Comm comm, std::string& value);

// Collective: the sum, minimum or maximum of `value` over the ranks, on every rank.
template <class T>
T sum_over_ranks(MPI_Comm comm, T value) {
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &value, 1, mpi_type<T>(), MPI_SUM, comm));
  return value;
}
template <class T>
T min_over_ranks(MPI_Comm comm, T value) {
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &value, 1, mpi_type<T>(), MPI_MIN, comm));
  return value;
}
template <class T>
T max_over_ranks(MPI_Comm comm, T value) {
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &value, 1, mpi_type<T>(), MPI_MAX, comm));
  return value;
}
// Whether `mine` is true on any rank, and on every rank.
bool any_rank(MPI_Comm comm, bool mine);
bool all_ranks(MPI_Comm comm, bool mine);

// Collective: every rank's `mine`, in rank order, with rank r contributing counts[r] elements
// (the counts known to every rank; mine.size() == counts[this rank]).
template <class T>
std::vector<T> allgatherv(MPI_Comm comm, const std::vector<T>& mine,
                          const std::vector<int>& counts) {
  std::vector<int> displs(counts.size(), 0);
  for (std::size_t r = 1; r < counts.size(); ++r)
    displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<T> all(counts.empty() ? 0 : static_cast<std::size_t>(displs.back() + counts.back()));
  CHECK_MPI(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), mpi_type<T>(), all.data(),
                           counts.data(), displs.data(), mpi_type<T>(), comm));
  return all;
}
// Collective: every rank's string, in rank order (lengths need not agree).
std::vector<std::string> allgather(MPI_Comm comm, const std::string& mine);

// A token passed from rank to rank in rank order, for work done one rank at a time: rank r > 0
// waits in receive_token() for rank r - 1's token (rank 0 gets `first`), does its part, and
// pass_token() hands a token on to rank r + 1 (the last rank passes nothing). `tag` keeps the
// ring's messages apart from others on comm.
int receive_token(MPI_Comm comm, int tag, int first);
void pass_token(MPI_Comm comm, int tag, int token);

// Collective: waits until every rank is here.
void barrier(MPI_Comm comm);

} // namespace tessera::mpi
