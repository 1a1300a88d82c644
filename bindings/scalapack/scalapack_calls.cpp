// The layouts come from the descriptors (mpi/scalapack_grid.hpp), the communicator from the
// BLACS context; a call builds its plan, or finds the one an earlier call with the same
// arguments built (plan_cache.hpp), and executes it.
#include "scalapack_calls.hpp"

#include <algorithm>
#include <complex>
#include <utility>
#include <vector>

#include "blacs.hpp"
#include "core/check.hpp"
#include "mpi/scalapack_grid.hpp"
#include "plan_cache.hpp"

namespace tessera::scalapack {

namespace {

// The grid's processes in the system context's numbering, in the order of the grid communicator
// (ascending), as every process of the grid sees them.
std::vector<int> scalapack_members(int context) {
  int nprow = 0, npcol = 0, myrow = 0, mycol = 0;
  Cblacs_gridinfo(context, &nprow, &npcol, &myrow, &mycol);
  std::vector<int> members;
  for (int p = 0; p < nprow; ++p)
    for (int q = 0; q < npcol; ++q)
      members.push_back(Cblacs_pnum(context, p, q));
  std::sort(members.begin(), members.end());
  return members;
}

MPI_Comm scalapack_system(int context) {
  int system_context = 0;
  Cblacs_get(context, 10, &system_context); // 10: the system context the grid was made from
  return Cblacs2sys_handle(system_context);
}

mpi::BlacsPosition scalapack_position(int context) {
  mpi::BlacsPosition p;
  Cblacs_gridinfo(context, &p.nprow, &p.npcol, &p.myrow, &p.mycol);
  return p;
}

// This rank's share of what determines a plan: the call's scalars, its place in both grids and
// its descriptors (less the context numbers, which BLACS reuses), and the processes of the
// call's context as ranks of MPI_COMM_WORLD (the system communicator may be another one).
PlanKey plan_key(int m, int n, int ia, int ja, const int* desca, int ib, int jb, const int* descb,
                 MatrixOp op, DType dtype, const std::vector<int>& members, MPI_Comm system) {
  PlanKey key{m, n, ia, ja, ib, jb, static_cast<int>(op), static_cast<int>(dtype)};
  for (const int* desc : {desca, descb}) {
    const mpi::BlacsPosition p = scalapack_position(desc[1]);
    key.insert(key.end(), {p.nprow, p.npcol, p.myrow, p.mycol});
    for (int k = 0; k < 9; ++k)
      if (k != 1)
        key.push_back(p.in_grid() ? desc[k] : -1);
  }
  MPI_Group system_group = MPI_GROUP_NULL, world_group = MPI_GROUP_NULL;
  CHECK_MPI(MPI_Comm_group(system, &system_group));
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  std::vector<int> world(members.size());
  const int rc = MPI_Group_translate_ranks(system_group, static_cast<int>(members.size()),
                                           members.data(), world_group, world.data());
  MPI_Group_free(&system_group);
  MPI_Group_free(&world_group);
  CHECK_MPI(rc);
  key.insert(key.end(), world.begin(), world.end());
  return key;
}

} // namespace

template <class T>
void redistribute(int m, int n, T alpha, const T* a, int ia, int ja, const int* desca, T beta, T* b,
                  int ib, int jb, const int* descb, MatrixOp op, int context) {
  if (m <= 0 || n <= 0)
    return;
  const std::vector<int> members = scalapack_members(context);
  const MPI_Comm system = scalapack_system(context);
  PlanKey key = plan_key(m, n, ia, ja, desca, ib, jb, descb, op, dtype_of<T>, members, system);
  const std::complex<double> a_scale(alpha), b_scale(beta);
  PlanCache& cache = plan_cache();
  if (RedistributePlan* plan = cache.find(key, context)) {
    plan->execute(a, b, a_scale, b_scale);
    return;
  }
  const mpi::unique_comm grid = mpi::grid_communicator(system, members);
  const MPI_Comm comm = grid.get();
  const Layout la = mpi::scalapack_layout(desca, scalapack_position(desca[1]), comm);
  const Layout lb = mpi::scalapack_layout(descb, scalapack_position(descb[1]), comm);
  RedistributeOptions o;
  o.op = op;
  o.a_row = ia - 1;
  o.a_col = ja - 1;
  o.b_row = ib - 1;
  o.b_col = jb - 1;
  o.rows = m;
  o.cols = n;
  RedistributePlan plan(la, lb, dtype_of<T>, comm, o);
  plan.execute(a, b, a_scale, b_scale);
  cache.insert(std::move(key), std::move(plan), comm);
}

void set_plan_cache_capacity(int capacity) {
  plan_cache().set_capacity(capacity);
}

PlanCacheStats plan_cache_stats() {
  return plan_cache().stats();
}

template void redistribute<float>(int, int, float, const float*, int, int, const int*, float,
                                  float*, int, int, const int*, MatrixOp, int);
template void redistribute<double>(int, int, double, const double*, int, int, const int*, double,
                                   double*, int, int, const int*, MatrixOp, int);
template void redistribute<std::complex<float>>(int, int, std::complex<float>,
                                                const std::complex<float>*, int, int, const int*,
                                                std::complex<float>, std::complex<float>*, int, int,
                                                const int*, MatrixOp, int);
template void redistribute<std::complex<double>>(int, int, std::complex<double>,
                                                 const std::complex<double>*, int, int, const int*,
                                                 std::complex<double>, std::complex<double>*, int,
                                                 int, const int*, MatrixOp, int);

} // namespace tessera::scalapack
