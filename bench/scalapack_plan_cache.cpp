// tessera's pdgemr2d or pdtran (libtessera_scalapack's calls) on one n × n f64 matrix over a
// 1 × p grid, called 21 times with the same descriptors: the first call against the median of
// the later ones, with the plan cache on (16 plans) and off.
//
//   mpiexec -n 2 bench/scalapack_plan_cache N NB_A NB_B [gemr2d|tran]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "scalapack_calls.hpp"

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrc, const int* nprocs);
}

namespace {

struct Matrix {
  int desc[9] = {};
  std::vector<double> local;
};

Matrix block_cyclic(int context, int n, int nb, int p, int mycol) {
  const int zero = 0, one = 1;
  const int rows = numroc_(&n, &nb, &zero, &zero, &one);
  const int cols = numroc_(&n, &nb, &mycol, &zero, &p);
  Matrix m;
  const int d[9] = {1, context, n, n, nb, nb, 0, 0, std::max(1, rows)};
  std::copy(d, d + 9, m.desc);
  m.local.assign(static_cast<std::size_t>(std::max(1, rows)) * static_cast<std::size_t>(cols), 1.0);
  return m;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc < 4) {
    if (rank == 0)
      std::fprintf(stderr, "usage: scalapack_plan_cache N NB_A NB_B [gemr2d|tran]\n");
    MPI_Finalize();
    return 2;
  }
  const int n = std::atoi(argv[1]);
  const bool tran = argc > 4 && std::strcmp(argv[4], "tran") == 0;
  int context = 0, nprow = 0, npcol = 0, myrow = 0, mycol = 0;
  Cblacs_get(0, 0, &context);
  Cblacs_gridinit(&context, "Row", 1, p);
  Cblacs_gridinfo(context, &nprow, &npcol, &myrow, &mycol);
  Matrix a = block_cyclic(context, n, std::atoi(argv[2]), p, mycol);
  Matrix b = block_cyclic(context, n, std::atoi(argv[3]), p, mycol);
  const auto op = tran ? tessera::MatrixOp::Transpose : tessera::MatrixOp::None;
  for (int capacity : {16, 0}) {
    tessera::scalapack::set_plan_cache_capacity(0); // empty
    tessera::scalapack::set_plan_cache_capacity(capacity);
    std::vector<double> ms;
    for (int k = 0; k < 21; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      tessera::scalapack::redistribute<double>(n, n, 1.0, a.local.data(), 1, 1, a.desc, 0.0,
                                               b.local.data(), 1, 1, b.desc, op, context);
      double t = (MPI_Wtime() - t0) * 1e3;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      ms.push_back(t);
    }
    std::sort(ms.begin() + 1, ms.end());
    if (rank == 0)
      std::printf("%s n=%d blocks %s->%s, %d ranks, plan cache %2d: first %.3f ms, later "
                  "median %.3f ms (min %.3f)\n",
                  tran ? "pdtran" : "pdgemr2d", n, argv[2], argv[3], p, capacity, ms[0], ms[11],
                  ms[1]);
  }
  MPI_Finalize();
  return 0;
}
