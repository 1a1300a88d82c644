// check_on_every_rank (tessera/agreement.hpp): the library's face of mpi::collectively.
#include <tessera/agreement.hpp>

#include "mpi/agreement.hpp"

namespace tessera {

void check_on_every_rank(MPI_Comm comm, const std::function<void()>& checks) {
  mpi::collectively(comm, checks);
}

} // namespace tessera
