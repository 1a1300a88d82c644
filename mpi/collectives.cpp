#include "mpi/collectives.hpp"

#include "mpi/communicator.hpp"

namespace tessera::mpi {

void broadcast(MPI_Comm comm, std::string& value) {
  long long n = static_cast<long long>(value.size());
  broadcast(comm, n);
  value.resize(static_cast<std::size_t>(n));
  if (n > 0)
    CHECK_MPI(MPI_Bcast(value.data(), static_cast<int>(n), MPI_CHAR, 0, comm));
}

bool any_rank(MPI_Comm comm, bool mine) {
  return max_over_ranks(comm, mine ? 1 : 0) != 0;
}

bool all_ranks(MPI_Comm comm, bool mine) {
  return min_over_ranks(comm, mine ? 1 : 0) != 0;
}

std::vector<std::string> allgather(MPI_Comm comm, const std::string& mine) {
  const int size = comm_size(comm);
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size));
  CHECK_MPI(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm));
  const std::vector<char> chars(mine.begin(), mine.end());
  const std::vector<char> all = allgatherv(comm, chars, lens);
  std::vector<std::string> out;
  std::size_t at = 0;
  for (const int n : lens) {
    out.emplace_back(all.data() + at, static_cast<std::size_t>(n));
    at += static_cast<std::size_t>(n);
  }
  return out;
}

int receive_token(MPI_Comm comm, int tag, int first) {
  const int rank = comm_rank(comm);
  if (rank == 0)
    return first;
  int token = 0;
  CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, rank - 1, tag, comm, MPI_STATUS_IGNORE));
  return token;
}

void pass_token(MPI_Comm comm, int tag, int token) {
  const int rank = comm_rank(comm);
  if (rank + 1 < comm_size(comm))
    CHECK_MPI(MPI_Send(&token, 1, MPI_INT, rank + 1, tag, comm));
}

void barrier(MPI_Comm comm) {
  CHECK_MPI(MPI_Barrier(comm));
}

} // namespace tessera::mpi
