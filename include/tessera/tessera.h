/* tessera's C API: opaque plan handles and error codes over the C++ library.
 *
 *   tessera_transpose_plan plan;
 *   if (tessera_transpose_plan_create(&plan, M, N, TESSERA_F64, comm, TESSERA_BACKEND_CPU))
 *     fprintf(stderr, "%s\n", tessera_last_error());
 *   tessera_transpose_plan_execute(plan, in, out);   this rank's rows of A -> rows of A^T
 *   tessera_transpose_plan_destroy(plan);
 *
 * Every function returns TESSERA_OK or an error code; tessera_last_error() is then the message
 * (per thread, valid until the next failing call on that thread). Calls taking a communicator
 * are collective over it and fail on every rank together. The rows of a rank follow the block
 * distribution: rank r of P owns rows [tessera_block_begin(rows, P, r), ... (r + 1)). */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include <tessera/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tessera_status {
  TESSERA_OK = 0,
  TESSERA_ERROR_INPUT = 1,        /* bad arguments: shapes, types, names, null pointers */
  TESSERA_ERROR_IO = 2,           /* the file system or HDF5 failed */
  TESSERA_ERROR_MPI = 3,          /* an MPI call failed, or the MPI thread level is too low */
  TESSERA_ERROR_CUDA = 4,         /* a CUDA, cuBLAS or NCCL call failed */
  TESSERA_ERROR_NOT_COMPILED = 5, /* the backend or feature is not in this build */
  TESSERA_ERROR_RESOURCE = 6,     /* memory could not be allocated */
  TESSERA_ERROR_NUMERICAL = 7,    /* a NaN or an infinity where none may be */
  TESSERA_ERROR_INTERNAL = 8      /* a bug in tessera (or an unknown exception) */
} tessera_status;

/* The integer types are for permutations of dimensions; transposes, reductions and HDF5 rows
 * take the first four. */
typedef enum tessera_dtype {
  TESSERA_F32 = 0,
  TESSERA_F64 = 1,
  TESSERA_C64 = 2,
  TESSERA_C128 = 3,
  TESSERA_I8 = 4,
  TESSERA_I16 = 5,
  TESSERA_I32 = 6,
  TESSERA_I64 = 7,
  TESSERA_U8 = 8,
  TESSERA_U16 = 9,
  TESSERA_U32 = 10,
  TESSERA_U64 = 11
} tessera_dtype;
typedef enum tessera_backend {
  TESSERA_BACKEND_AUTO = 0,
  TESSERA_BACKEND_CPU = 1,
  TESSERA_BACKEND_CUDA = 2
} tessera_backend;
typedef enum tessera_op {
  TESSERA_OP_SUM = 0,
  TESSERA_OP_MIN = 1,
  TESSERA_OP_MAX = 2,
  TESSERA_OP_MEAN = 3,
  TESSERA_OP_NORM1 = 4,
  TESSERA_OP_NORM2 = 5,
  TESSERA_OP_NORMINF = 6,
  TESSERA_OP_COUNT = 7 /* the number of elements that are not missing */
} tessera_op;
typedef enum tessera_axis {
  TESSERA_AXIS_ALL = 0,
  TESSERA_AXIS_ROWS = 1,
  TESSERA_AXIS_COLS = 2
} tessera_axis;
typedef enum tessera_log_level {
  TESSERA_LOG_OFF = 0,
  TESSERA_LOG_ERROR = 1,
  TESSERA_LOG_WARN = 2,
  TESSERA_LOG_INFO = 3,
  TESSERA_LOG_DEBUG = 4
} tessera_log_level;

typedef struct tessera_transpose_plan_s* tessera_transpose_plan;
typedef struct tessera_reduce_plan_s* tessera_reduce_plan;
typedef struct tessera_permute_plan_s* tessera_permute_plan;

/* The message of the last failing call on this thread ("" when none). */
TESSERA_API const char* tessera_last_error(void);
TESSERA_API const char* tessera_version(void);
/* Messages at `level` or more severe go to stderr (default: TESSERA_LOG_OFF, silent). */
TESSERA_API int tessera_set_log_level(tessera_log_level level);

/* The block distribution of `rows` rows over `nranks` ranks: the first row of `rank`, and the
 * number of rows it owns. */
TESSERA_API int64_t tessera_block_begin(int64_t rows, int nranks, int rank);
TESSERA_API int64_t tessera_block_rows(int64_t rows, int nranks, int rank);

/* Distributed transpose of the M x N matrix whose rows are distributed over comm: execute
 * reads this rank's rows of A (tessera_block_rows(M, P, r) x N, row-major) and writes its rows
 * of A^T (tessera_block_rows(N, P, r) x M). Any MPI thread level suffices. */
TESSERA_API int tessera_transpose_plan_create(tessera_transpose_plan* plan, int64_t rows,
                                              int64_t cols, tessera_dtype dtype, MPI_Comm comm,
                                              tessera_backend backend);
TESSERA_API int tessera_transpose_plan_execute(tessera_transpose_plan plan, const void* in,
                                               void* out);
/* Collective when the ranks share a node; null is accepted. */
TESSERA_API int tessera_transpose_plan_destroy(tessera_transpose_plan plan);

/* Distributed reductions (f32 or f64 data) of the `nops` operations `ops` along `axis`.
 * execute writes nops x count doubles to `values` (op-major: values[k * count + i] is value i
 * of ops[k]), where count = tessera_reduce_plan_count(): 1 (ALL), rows (ROWS) or cols (COLS).
 * The same values on every rank. Any MPI thread level suffices. */
TESSERA_API int tessera_reduce_plan_create(tessera_reduce_plan* plan, int64_t rows, int64_t cols,
                                           tessera_dtype dtype, MPI_Comm comm,
                                           tessera_backend backend, const tessera_op* ops, int nops,
                                           tessera_axis axis);
/* Elements a reduction skips, as missing: NaN when skip_nan is nonzero (what numpy's nansum,
 * nanmax, ... compute), and those equal to one of values[0 .. nvalues) (a netCDF _FillValue or
 * missing_value; a NaN there stands for any NaN). A row, column or matrix with no element left
 * gives 0 for sum and the norms, NaN for min, max and mean; TESSERA_OP_COUNT counts the others. */
typedef struct tessera_missing {
  int skip_nan;
  const double* values;
  int nvalues;
} tessera_missing;
/* tessera_reduce_plan_create that skips `missing` (null: nothing, as tessera_reduce_plan_create).
 * The same bits at any rank count. */
TESSERA_API int tessera_reduce_plan_create_missing(tessera_reduce_plan* plan, int64_t rows,
                                                   int64_t cols, tessera_dtype dtype, MPI_Comm comm,
                                                   tessera_backend backend, const tessera_op* ops,
                                                   int nops, tessera_axis axis,
                                                   const tessera_missing* missing);
TESSERA_API int64_t tessera_reduce_plan_count(tessera_reduce_plan plan);
/* The execute functions are collective: their arguments are checked on every rank together, so
 * a null block (on a rank with rows) or null `values` on one rank returns TESSERA_ERROR_INPUT on
 * every rank, the others' message naming that rank ("rank 1: ..."). A null plan has no
 * communicator to agree over: it fails on its own rank only. */
TESSERA_API int tessera_reduce_plan_execute(tessera_reduce_plan plan, const void* block,
                                            double* values);
TESSERA_API int tessera_reduce_plan_destroy(tessera_reduce_plan plan);

/* Distributed permutation of dimensions (numpy's transpose(axes)) of the row-major array of
 * `rank` (1 to 8) dimensions shape[0 .. rank), any dtype: output dimension k is input dimension
 * axes[k]. The input is split along its dimension 0 over comm, the output along its own
 * dimension 0 (input dimension axes[0]), both in blocks: rank r of P owns indices
 * [tessera_block_begin(n, P, r), ... (r + 1)) of them, n = shape[0] for the input and
 * shape[axes[0]] for the output, with every index of the other dimensions. execute reads this
 * rank's input block and writes its output block (host memory, also on the CUDA backend, which
 * then permutes through the GPU); they must not overlap. Any MPI thread level suffices. */
TESSERA_API int tessera_permute_plan_create(tessera_permute_plan* plan, int rank,
                                            const int64_t* shape, const int* axes,
                                            tessera_dtype dtype, MPI_Comm comm,
                                            tessera_backend backend);
/* This rank's input and output blocks: the first index and the length along their dimension 0,
 * and the number of elements. Any of the pointers may be null. */
TESSERA_API int tessera_permute_plan_input_block(tessera_permute_plan plan, int64_t* begin,
                                                 int64_t* length, int64_t* elements);
TESSERA_API int tessera_permute_plan_output_block(tessera_permute_plan plan, int64_t* begin,
                                                  int64_t* length, int64_t* elements);
TESSERA_API int tessera_permute_plan_execute(tessera_permute_plan plan, const void* in, void* out);
TESSERA_API int tessera_permute_plan_destroy(tessera_permute_plan plan);

/* This rank's rows of a 2-D dataset, collectively (see tessera/hdf5.hpp). write creates `file`
 * with the one dataset (replacing an existing file once complete). */
TESSERA_API int tessera_h5_read_rows(const char* file, const char* dataset, int64_t rows,
                                     int64_t cols, tessera_dtype dtype, void* block, MPI_Comm comm);
TESSERA_API int tessera_h5_write_rows(const char* file, const char* dataset, int64_t rows,
                                      int64_t cols, tessera_dtype dtype, const void* block,
                                      MPI_Comm comm);

/* Fortran's view: the same calls with a Fortran communicator handle (MPI_Comm_c2f). */
TESSERA_API int tessera_transpose_plan_create_f(tessera_transpose_plan* plan, int64_t rows,
                                                int64_t cols, int dtype, MPI_Fint comm,
                                                int backend);
TESSERA_API int tessera_reduce_plan_create_f(tessera_reduce_plan* plan, int64_t rows, int64_t cols,
                                             int dtype, MPI_Fint comm, int backend, const int* ops,
                                             int nops, int axis);
TESSERA_API int tessera_reduce_plan_create_missing_f(tessera_reduce_plan* plan, int64_t rows,
                                                     int64_t cols, int dtype, MPI_Fint comm,
                                                     int backend, const int* ops, int nops,
                                                     int axis, int skip_nan, const double* values,
                                                     int nvalues);
TESSERA_API int tessera_permute_plan_create_f(tessera_permute_plan* plan, int rank,
                                              const int64_t* shape, const int* axes, int dtype,
                                              MPI_Fint comm, int backend);
/* Copies the last error message into buf (at most len bytes, NUL-padded); its length. */
TESSERA_API int tessera_last_error_copy(char* buf, int len);

#ifdef __cplusplus
}
#endif

#endif
