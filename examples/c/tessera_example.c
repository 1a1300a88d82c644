/* tessera from C: a distributed transpose, reductions and a permutation of dimensions, with
 * every result checked.
 *   mpirun -np 3 ./tessera_example_c */
#include <mpi.h>
#include <tessera/tessera.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != TESSERA_OK) {                                                                    \
      fprintf(stderr, "tessera: %s\n", tessera_last_error());                                      \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv); /* MPI_THREAD_SINGLE is enough for the plans */
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const int64_t M = 41, N = 17;
  const int64_t b = tessera_block_begin(M, nranks, rank),
                rows = tessera_block_rows(M, nranks, rank);
  const int64_t tb = tessera_block_begin(N, nranks, rank),
                trows = tessera_block_rows(N, nranks, rank);
  double* a = malloc(sizeof(double) * (size_t)(rows * N + 1));
  double* at = malloc(sizeof(double) * (size_t)(trows * M + 1));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < N; ++j)
      a[i * N + j] = (double)((b + i) * N + j);

  tessera_transpose_plan plan;
  CHECK(
      tessera_transpose_plan_create(&plan, M, N, TESSERA_F64, MPI_COMM_WORLD, TESSERA_BACKEND_CPU));
  CHECK(tessera_transpose_plan_execute(plan, a, at));
  CHECK(tessera_transpose_plan_destroy(plan));
  int bad = 0;
  for (int64_t r = 0; r < trows; ++r)
    for (int64_t c = 0; c < M; ++c)
      bad += at[r * M + c] != (double)(c * N + tb + r);

  const tessera_op ops[2] = {TESSERA_OP_SUM, TESSERA_OP_NORM2};
  tessera_reduce_plan rp;
  CHECK(tessera_reduce_plan_create(&rp, M, N, TESSERA_F64, MPI_COMM_WORLD, TESSERA_BACKEND_CPU, ops,
                                   2, TESSERA_AXIS_ALL));
  double values[2];
  CHECK(tessera_reduce_plan_execute(rp, a, values));
  CHECK(tessera_reduce_plan_destroy(rp));
  const double n = (double)(M * N), norm2 = sqrt((n - 1) * n * (2 * n - 1) / 6);
  bad += values[0] != n * (n - 1) / 2;
  bad += fabs(values[1] - norm2) > 1e-12 * norm2;

  /* Missing values are skipped: on ranks with two rows or more, the first element becomes NaN
   * and the second the fill value -999 (a netCDF _FillValue). */
  const double fill = -999.0;
  if (rows > 1) {
    a[0] = NAN;
    a[1] = fill;
  }
  const tessera_missing missing = {1, &fill, 1};
  const tessera_op counted[2] = {TESSERA_OP_SUM, TESSERA_OP_COUNT};
  CHECK(tessera_reduce_plan_create_missing(&rp, M, N, TESSERA_F64, MPI_COMM_WORLD,
                                           TESSERA_BACKEND_CPU, counted, 2, TESSERA_AXIS_ALL,
                                           &missing));
  CHECK(tessera_reduce_plan_execute(rp, a, values));
  CHECK(tessera_reduce_plan_destroy(rp));
  double sum = n * (n - 1) / 2, count = n;
  for (int r = 0; r < nranks; ++r)
    if (tessera_block_rows(M, nranks, r) > 1) {
      sum -= 2.0 * (double)(tessera_block_begin(M, nranks, r) * N) + 1.0;
      count -= 2;
    }
  bad += values[0] != sum || values[1] != count;

  /* Permutation of dimensions: x[i][j][k] = (i * J + j) * K + k (16-bit integers), split along
   * i, becomes this rank's block of y[k][i][j] = x[i][j][k], split along k. */
  const int64_t shape[3] = {6, 5, 3};
  const int axes[3] = {2, 0, 1};
  tessera_permute_plan pp;
  CHECK(tessera_permute_plan_create(&pp, 3, shape, axes, TESSERA_I16, MPI_COMM_WORLD,
                                    TESSERA_BACKEND_CPU));
  int64_t xb, xn, yb, yk, yn;
  CHECK(tessera_permute_plan_input_block(pp, &xb, NULL, &xn));
  CHECK(tessera_permute_plan_output_block(pp, &yb, &yk, &yn));
  int16_t* x = malloc(sizeof(int16_t) * (size_t)(xn + 1));
  int16_t* y = malloc(sizeof(int16_t) * (size_t)(yn + 1));
  for (int64_t q = 0; q < xn; ++q)
    x[q] = (int16_t)(xb * shape[1] * shape[2] + q);
  CHECK(tessera_permute_plan_execute(pp, x, y));
  CHECK(tessera_permute_plan_destroy(pp));
  bad += yn != yk * shape[0] * shape[1];
  for (int64_t k = 0; k < yk; ++k)
    for (int64_t i = 0; i < shape[0]; ++i)
      for (int64_t j = 0; j < shape[1]; ++j)
        bad += y[(k * shape[0] + i) * shape[1] + j] != (i * shape[1] + j) * shape[2] + yb + k;
  free(x);
  free(y);
  const int twice[3] = {2, 2, 0};
  bad += tessera_permute_plan_create(&pp, 3, shape, twice, TESSERA_I16, MPI_COMM_WORLD,
                                     TESSERA_BACKEND_CPU) != TESSERA_ERROR_INPUT ||
         pp != NULL;

  /* Errors come back as codes with a message. */
  tessera_transpose_plan none;
  const int rc =
      tessera_transpose_plan_create(&none, -1, N, TESSERA_F64, MPI_COMM_WORLD, TESSERA_BACKEND_CPU);
  bad += rc != TESSERA_ERROR_INPUT || none != NULL || tessera_last_error()[0] == '\0';

  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("C example (%d ranks): %s\n", nranks, total == 0 ? "ok" : "FAILED");
  free(a);
  free(at);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
