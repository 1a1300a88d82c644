/* A plain ScaLAPACK program, linked with libtessera_scalapack ahead of ScaLAPACK: its pdgemr2d_
 * and pdtran_ calls must reach tessera's (dladdr says which library defines them) and give the
 * right matrices. A(i, j) = 1000 i + j, so every rank checks its part of the result alone.
 * Exit status 0 on every rank when all is right. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrc, const int* nprocs);
void pdgemr2d_(const int* m, const int* n, const double* a, const int* ia, const int* ja,
               const int* desca, double* b, const int* ib, const int* jb, const int* descb,
               const int* ictxt);
void pdtran_(const int* m, const int* n, const double* alpha, const double* a, const int* ia,
             const int* ja, const int* desca, const double* beta, double* c, const int* ic,
             const int* jc, const int* descc);

/* The global index of local index `l` along one dimension (block nb, np processes, this one p). */
static int global_index(int l, int nb, int p, int np) {
  return ((l / nb) * np + p) * nb + l % nb;
}

typedef struct {
  int desc[9], rows, cols, myrow, mycol, pr, pc;
  double* data;
} matrix;

static matrix make_matrix(int context, int m, int n, int mb, int nb) {
  matrix x;
  int zero = 0;
  Cblacs_gridinfo(context, &x.pr, &x.pc, &x.myrow, &x.mycol);
  x.rows = numroc_(&m, &mb, &x.myrow, &zero, &x.pr);
  x.cols = numroc_(&n, &nb, &x.mycol, &zero, &x.pc);
  int lld = x.rows > 1 ? x.rows : 1;
  int d[9] = {1, context, m, n, mb, nb, 0, 0, lld};
  memcpy(x.desc, d, sizeof d);
  x.data = calloc((size_t)lld * (size_t)(x.cols > 0 ? x.cols : 1), sizeof(double));
  return x;
}

static double value_at(const matrix* x, int r, int c) {
  return x->data[(size_t)c * (size_t)x->desc[8] + (size_t)r];
}

static int from_tessera(void* symbol) {
  Dl_info info;
  return dladdr(symbol, &info) && info.dli_fname && strstr(info.dli_fname, "tessera_scalapack");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (!from_tessera((void*)pdgemr2d_) || !from_tessera((void*)pdtran_)) {
    fprintf(stderr, "rank %d: pdgemr2d_/pdtran_ do not come from libtessera_scalapack\n", rank);
    ++failures;
  }
  int row_grid = 0, col_grid = 0;
  Cblacs_get(0, 0, &row_grid);
  Cblacs_gridinit(&row_grid, "Row", 1, size);
  Cblacs_get(0, 0, &col_grid);
  Cblacs_gridinit(&col_grid, "Col", size, 1);

  const int m = 37, n = 29, one = 1;
  matrix a = make_matrix(row_grid, m, n, 4, 3);
  for (int c = 0; c < a.cols; ++c)
    for (int r = 0; r < a.rows; ++r)
      a.data[(size_t)c * (size_t)a.desc[8] + (size_t)r] =
          1000.0 * global_index(r, 4, a.myrow, a.pr) + global_index(c, 3, a.mycol, a.pc);

  matrix b = make_matrix(col_grid, m, n, 5, 7); /* B = A on another grid and blocks */
  pdgemr2d_(&m, &n, a.data, &one, &one, a.desc, b.data, &one, &one, b.desc, &row_grid);
  for (int c = 0; c < b.cols; ++c)
    for (int r = 0; r < b.rows; ++r)
      failures += value_at(&b, r, c) !=
                  1000.0 * global_index(r, 5, b.myrow, b.pr) + global_index(c, 7, b.mycol, b.pc);

  matrix t = make_matrix(row_grid, n, m, 2, 6); /* T = 2 Aᵀ on A's grid */
  const double alpha = 2.0, beta = 0.0;
  pdtran_(&n, &m, &alpha, a.data, &one, &one, a.desc, &beta, t.data, &one, &one, t.desc);
  for (int c = 0; c < t.cols; ++c)
    for (int r = 0; r < t.rows; ++r)
      failures += value_at(&t, r, c) != 2.0 * (1000.0 * global_index(c, 6, t.mycol, t.pc) +
                                               global_index(r, 2, t.myrow, t.pr));

  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("drop-in check: %d wrong elements\n", failures);
  free(a.data);
  free(b.data);
  free(t.data);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
