#include "mpi/communicator.hpp"

#include "core/check.hpp"
#include "core/log.hpp"

namespace tessera::mpi {

void CommTraits::destroy(MPI_Comm c) noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || c == MPI_COMM_WORLD || c == MPI_COMM_SELF)
    return;
  if (MPI_Comm_free(&c) != MPI_SUCCESS)
    log::warn("MPI_Comm_free failed");
}

void DatatypeTraits::destroy(MPI_Datatype t) noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && MPI_Type_free(&t) != MPI_SUCCESS)
    log::warn("MPI_Type_free failed");
}

Communicator::Communicator(MPI_Comm comm) {
  MPI_Comm dup = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_dup(comm, &dup));
  comm_.reset(dup);
  CHECK_MPI(MPI_Comm_rank(dup, &rank_));
  CHECK_MPI(MPI_Comm_size(dup, &size_));
}

namespace {
unique_comm split_node(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  return unique_comm(node);
}
} // namespace

int Communicator::node_local_rank() const {
  return comm_rank(split_node(get()).get());
}
int Communicator::node_local_size() const {
  return comm_size(split_node(get()).get());
}

int comm_rank(MPI_Comm c) {
  int r = 0;
  CHECK_MPI(MPI_Comm_rank(c, &r));
  return r;
}

int comm_size(MPI_Comm c) {
  int s = 0;
  CHECK_MPI(MPI_Comm_size(c, &s));
  return s;
}

} // namespace tessera::mpi
