// A ScaLAPACK descriptor as a Layout over a whole communicator. Only the ranks in a BLACS grid
// know its shape, their position in it and their own leading dimension; ranks outside it (as
// pdgemr2d allows) pass nprow = -1. One allgather tells every rank the grid, the descriptor and
// which rank sits at each grid position.
#pragma once

#include <mpi.h>

#include <vector>

#include <tessera/layout.hpp>

#include "mpi/communicator.hpp"

namespace tessera::mpi {

// This rank's view of one BLACS grid (Cblacs_gridinfo's answer).
struct BlacsPosition {
  int nprow = -1, npcol = -1, myrow = -1, mycol = -1;
  bool in_grid() const noexcept { return nprow > 0 && myrow >= 0; }
};

// Collective over comm. desc is read only where position.in_grid(); the layout's leading
// dimension is this rank's desc[8] (tight where it holds nothing).
Layout scalapack_layout(const int desc[9], BlacsPosition position, MPI_Comm comm);

// The processes of one BLACS grid as a communicator of their own: `members` are their ranks in
// `system` (the communicator the grid was made from). Collective over the members only, as
// ScaLAPACK calls are over a grid's processes only.
unique_comm grid_communicator(MPI_Comm system, const std::vector<int>& members);

} // namespace tessera::mpi
