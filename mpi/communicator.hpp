// RAII for MPI communicators and datatypes, and a small value type for "this rank in that
// communicator". Communicator owns a duplicate, so tessera's messages never mix with the
// caller's.
#pragma once

#include <mpi.h>

#include "core/unique_handle.hpp"

namespace tessera::mpi {

struct CommTraits {
  using type = MPI_Comm;
  static MPI_Comm null() noexcept { return MPI_COMM_NULL; }
  static void destroy(MPI_Comm c) noexcept;
};
struct DatatypeTraits {
  using type = MPI_Datatype;
  static MPI_Datatype null() noexcept { return MPI_DATATYPE_NULL; }
  static void destroy(MPI_Datatype t) noexcept;
};
using unique_comm = unique_handle<CommTraits>;
using unique_datatype = unique_handle<DatatypeTraits>;

class Communicator {
public:
  // Duplicates `comm` (collective over comm).
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD);
  MPI_Comm get() const noexcept { return comm_.get(); }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  // Ranks on the same node (MPI_Comm_split_type SHARED), for choosing a GPU.
  int node_local_rank() const;
  int node_local_size() const;

private:
  unique_comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

int comm_rank(MPI_Comm c);
int comm_size(MPI_Comm c);

} // namespace tessera::mpi
