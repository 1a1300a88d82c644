// The layouts come from the descriptors (mpi/scalapack_grid.hpp), the communicator from the
// BLACS context; each call builds its plan and executes it once.
#include "scalapack_calls.hpp"

#include <algorithm>
#include <complex>
#include <vector>

#include "blacs.hpp"
#include "mpi/scalapack_grid.hpp"

namespace tessera::scalapack {

namespace {

// The grid's processes, numbered as BLACS numbers them in the system context.
mpi::unique_comm scalapack_communicator(int context) {
  int system_context = 0;
  Cblacs_get(context, 10, &system_context); // 10: the system context the grid was made from
  int nprow = 0, npcol = 0, myrow = 0, mycol = 0;
  Cblacs_gridinfo(context, &nprow, &npcol, &myrow, &mycol);
  std::vector<int> members;
  for (int p = 0; p < nprow; ++p)
    for (int q = 0; q < npcol; ++q)
      members.push_back(Cblacs_pnum(context, p, q));
  std::sort(members.begin(), members.end());
  return mpi::grid_communicator(Cblacs2sys_handle(system_context), members);
}

mpi::BlacsPosition scalapack_position(int context) {
  mpi::BlacsPosition p;
  Cblacs_gridinfo(context, &p.nprow, &p.npcol, &p.myrow, &p.mycol);
  return p;
}

} // namespace

template <class T>
void redistribute(int m, int n, T alpha, const T* a, int ia, int ja, const int* desca, T beta, T* b,
                  int ib, int jb, const int* descb, MatrixOp op, int context) {
  if (m <= 0 || n <= 0)
    return;
  const mpi::unique_comm grid = scalapack_communicator(context);
  const MPI_Comm comm = grid.get();
  const Layout la = mpi::scalapack_layout(desca, scalapack_position(desca[1]), comm);
  const Layout lb = mpi::scalapack_layout(descb, scalapack_position(descb[1]), comm);
  RedistributeOptions o;
  o.op = op;
  o.alpha = std::complex<double>(alpha);
  o.beta = std::complex<double>(beta);
  o.a_row = ia - 1;
  o.a_col = ja - 1;
  o.b_row = ib - 1;
  o.b_col = jb - 1;
  o.rows = m;
  o.cols = n;
  RedistributePlan plan(la, lb, dtype_of<T>, comm, o);
  plan.execute(a, b);
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
