// scalapack_layout: gather (grid position, descriptor) from every rank, then build the layout
// from any rank inside the grid.
#include "mpi/scalapack_grid.hpp"

#include <array>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "core/throw.hpp"

namespace tessera::mpi {

Layout scalapack_layout(const int desc[9], BlacsPosition position, MPI_Comm comm) {
  int size = 1, rank = 0;
  CHECK_MPI(MPI_Comm_size(comm, &size));
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  constexpr int fields = 13; // nprow, npcol, myrow, mycol, desc[0..8]
  std::array<int, fields> mine{};
  mine.fill(-1);
  mine[0] = position.nprow;
  mine[1] = position.npcol;
  mine[2] = position.myrow;
  mine[3] = position.mycol;
  if (position.in_grid())
    for (int k = 0; k < 9; ++k)
      mine[static_cast<std::size_t>(4 + k)] = desc[k];
  std::vector<int> all(static_cast<std::size_t>(size) * fields);
  CHECK_MPI(MPI_Allgather(mine.data(), fields, MPI_INT, all.data(), fields, MPI_INT, comm));
  auto field = [&](int r, int k) { return all[static_cast<std::size_t>(r * fields + k)]; };

  int first = -1; // a rank inside the grid
  for (int r = 0; r < size && first < 0; ++r)
    if (field(r, 0) > 0 && field(r, 2) >= 0)
      first = r;
  TESSERA_REQUIRE(first >= 0, InputError, "scalapack: no rank of the communicator is in the grid");
  const int nprow = field(first, 0), npcol = field(first, 1);
  std::vector<int> grid_ranks(static_cast<std::size_t>(nprow) * npcol, -1);
  for (int r = 0; r < size; ++r)
    if (field(r, 0) > 0 && field(r, 2) >= 0)
      grid_ranks[static_cast<std::size_t>(field(r, 2) * npcol + field(r, 3))] = r;
  for (int g : grid_ranks)
    TESSERA_REQUIRE(g >= 0, InputError,
                    "scalapack: a position of the {} x {} grid has no rank in the communicator",
                    nprow, npcol);
  int d[9];
  for (int k = 0; k < 9; ++k)
    d[k] = field(first, 4 + k);
  d[8] = position.in_grid() ? desc[8] : 0;
  return Layout::from_scalapack(d, nprow, npcol, size, std::move(grid_ranks));
}

unique_comm grid_communicator(MPI_Comm system, const std::vector<int>& members) {
  MPI_Group all = MPI_GROUP_NULL, grid = MPI_GROUP_NULL;
  CHECK_MPI(MPI_Comm_group(system, &all));
  CHECK_MPI(MPI_Group_incl(all, static_cast<int>(members.size()), members.data(), &grid));
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = MPI_Comm_create_group(system, grid, 0, &comm);
  MPI_Group_free(&grid);
  MPI_Group_free(&all);
  CHECK_MPI(rc);
  return unique_comm(comm);
}

} // namespace tessera::mpi
