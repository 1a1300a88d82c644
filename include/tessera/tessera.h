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

/* ---- Layouts and redistribution between them ----
 *
 * A layout says which rank holds which part of a global rows x cols matrix and where in its
 * local block: row blocks, column blocks, 2-D blocks on a pr x pc grid, ScaLAPACK's 2-D
 * block-cyclic, or any grid of blocks with an owner each. A layout is a value: creating one
 * is local (no communication), and a plan keeps its own copy, so a layout may be destroyed
 * once the plans that use it are built. A rank's local block holds the blocks it owns, block
 * rows and block columns in global order (for block-cyclic layouts exactly ScaLAPACK's local
 * matrix), row- or column-major with a leading dimension.
 *
 *   tessera_layout rows, cyclic;
 *   tessera_layout_create_rows(&rows, M, N, P, TESSERA_ROW_MAJOR);
 *   tessera_layout_create_scalapack(&cyclic, desc, nprow, npcol, TESSERA_GRID_ROW_MAJOR, NULL, P);
 *   tessera_redistribute_plan plan;
 *   tessera_redistribute_plan_create(&plan, rows, cyclic, TESSERA_MATRIX_OP_TRANSPOSE,
 *                                    TESSERA_F64, -1, -1, 0, 0, 0, 0, comm);
 *   tessera_redistribute_plan_execute(plan, 1.0, a_local, 0.0, b_local);   B = A^T
 */
typedef struct tessera_layout_s* tessera_layout;
typedef struct tessera_redistribute_plan_s* tessera_redistribute_plan;

/* How a local block is stored: row-major (C) or column-major (Fortran, ScaLAPACK). */
typedef enum tessera_storage { TESSERA_ROW_MAJOR = 0, TESSERA_COL_MAJOR = 1 } tessera_storage;
/* How ranks are numbered on a pr x pc process grid: row-major gives rank p * pc + q to grid
 * position (p, q) (BLACS's default "Row" order), column-major q * pr + p. */
typedef enum tessera_grid_order {
  TESSERA_GRID_ROW_MAJOR = 0,
  TESSERA_GRID_COL_MAJOR = 1
} tessera_grid_order;
/* op in B = beta * B + alpha * op(A). */
typedef enum tessera_matrix_op {
  TESSERA_MATRIX_OP_NONE = 0,
  TESSERA_MATRIX_OP_TRANSPOSE = 1,
  TESSERA_MATRIX_OP_CONJ_TRANSPOSE = 2
} tessera_matrix_op;

/* Rows (or columns) split evenly over nranks ranks, as tessera_block_begin splits rows. */
TESSERA_API int tessera_layout_create_rows(tessera_layout* layout, int64_t rows, int64_t cols,
                                           int nranks, tessera_storage storage);
TESSERA_API int tessera_layout_create_cols(tessera_layout* layout, int64_t rows, int64_t cols,
                                           int nranks, tessera_storage storage);
/* Rows split evenly over pr, columns over pc: one block per rank of the pr x pc grid; ranks
 * pr * pc .. nranks - 1 hold nothing (nranks 0 means pr * pc). */
TESSERA_API int tessera_layout_create_2d(tessera_layout* layout, int64_t rows, int64_t cols, int pr,
                                         int pc, tessera_grid_order order, tessera_storage storage,
                                         int nranks);
/* 2-D block-cyclic: mb x nb blocks dealt over a pr x pc grid from grid position (rsrc, csrc).
 * lld is the calling rank's leading dimension (0: tight). nranks as tessera_layout_create_2d. */
TESSERA_API int tessera_layout_create_block_cyclic(tessera_layout* layout, int64_t rows,
                                                   int64_t cols, int64_t mb, int64_t nb, int pr,
                                                   int pc, int rsrc, int csrc,
                                                   tessera_grid_order order, int nranks,
                                                   int64_t lld, tessera_storage storage);
/* The layout a ScaLAPACK descriptor desc[9] (dtype 1, ctxt, m, n, mb, nb, rsrc, csrc, lld)
 * describes on an nprow x npcol BLACS grid (Cblacs_gridinfo), column-major, leading dimension
 * desc[8]. grid_ranks, when not null, gives the rank of grid position (p, q) at
 * grid_ranks[p * npcol + q] (a context whose ranks are numbered otherwise); else `order`. */
TESSERA_API int tessera_layout_create_scalapack(tessera_layout* layout, const int* desc, int nprow,
                                                int npcol, tessera_grid_order order,
                                                const int* grid_ranks, int nranks);
/* Any grid of blocks: row_splits[0 .. nblock_rows] (0 = r_0 <= r_1 <= ... = rows), col_splits
 * likewise, owners[bi * nblock_cols + bj] the rank holding block (bi, bj). lld as above. */
TESSERA_API int tessera_layout_create_grid(tessera_layout* layout, int64_t nblock_rows,
                                           const int64_t* row_splits, int64_t nblock_cols,
                                           const int64_t* col_splits, const int* owners, int nranks,
                                           tessera_storage storage, int64_t lld);
/* Null is accepted. */
TESSERA_API int tessera_layout_destroy(tessera_layout layout);

/* The global shape and the number of ranks. Any of the pointers may be null (here and below). */
TESSERA_API int tessera_layout_global(tessera_layout layout, int64_t* rows, int64_t* cols,
                                      int* nranks);
/* Rank `rank`'s local block: its rows and columns (0 x 0 when it holds nothing), its leading
 * dimension, its storage order, and the elements its memory spans (what to allocate). */
TESSERA_API int tessera_layout_local_block(tessera_layout layout, int rank, int64_t* rows,
                                           int64_t* cols, int64_t* ld, tessera_storage* storage,
                                           int64_t* elements);
/* The grid of blocks: nblock_rows x nblock_cols of them. */
TESSERA_API int tessera_layout_blocks(tessera_layout layout, int64_t* nblock_rows,
                                      int64_t* nblock_cols);
/* Block (bi, bj): the global rows [row, row + rows) and columns [col, col + cols) it covers,
 * the rank holding it and where its first element sits in that rank's local block. */
TESSERA_API int tessera_layout_block(tessera_layout layout, int64_t bi, int64_t bj, int64_t* row,
                                     int64_t* rows, int64_t* col, int64_t* cols, int* owner,
                                     int64_t* local_row, int64_t* local_col);
/* Where global element (i, j) lives: the rank and the local row and column there. */
TESSERA_API int tessera_layout_locate(tessera_layout layout, int64_t i, int64_t j, int* rank,
                                      int64_t* local_row, int64_t* local_col);

/* B = beta * B + alpha * op(A) between any two layouts, f32, f64, c64 or c128, on the
 * sub-matrices B(b_row : b_row + rows, b_col : b_col + cols) and the matching part of A
 * (rows x cols from (a_row, a_col), or cols x rows under a transpose). Indices are 0-based;
 * rows or cols < 0 means the whole of B from its corner. Collective over comm; both layouts
 * must be over comm's size. Any MPI thread level suffices. */
TESSERA_API int tessera_redistribute_plan_create(tessera_redistribute_plan* plan, tessera_layout a,
                                                 tessera_layout b, tessera_matrix_op op,
                                                 tessera_dtype dtype, int64_t rows, int64_t cols,
                                                 int64_t a_row, int64_t a_col, int64_t b_row,
                                                 int64_t b_col, MPI_Comm comm);
/* Collective. a: this rank's local block of A, b: of B, host memory (device memory for a plan
 * made by tessera_redistribute_plan_create_on with TESSERA_MEMORY_DEVICE), not overlapping (null
 * where the rank holds nothing of it). alpha and beta are real, for any dtype; beta = 0 never
 * reads B (it may hold NaN), alpha = 1 with beta = 0 copies the bits. */
TESSERA_API int tessera_redistribute_plan_execute(tessera_redistribute_plan plan, double alpha,
                                                  const void* a, double beta, void* b);
/* The same with complex scalars, each two doubles (real, imaginary): the layout of C's double
 * _Complex and C++'s std::complex<double>, so a pointer to either may be passed. A real plan
 * (f32, f64) accepts only imaginary parts 0. */
TESSERA_API int tessera_redistribute_plan_execute_complex(tessera_redistribute_plan plan,
                                                          const double* alpha, const void* a,
                                                          const double* beta, void* b);
/* What one execute moves on this rank, in bytes: sent to and received from other ranks, kept
 * (copied locally), and the least it must send (sent equals it). */
TESSERA_API int tessera_redistribute_plan_traffic(tessera_redistribute_plan plan, int64_t* sent,
                                                  int64_t* received, int64_t* kept,
                                                  int64_t* sent_lower_bound);
/* Null is accepted. */
TESSERA_API int tessera_redistribute_plan_destroy(tessera_redistribute_plan plan);
/* tessera_redistribute_plan_create with a Fortran communicator handle (MPI_Comm_c2f). */
TESSERA_API int tessera_redistribute_plan_create_f(tessera_redistribute_plan* plan,
                                                   tessera_layout a, tessera_layout b, int op,
                                                   int dtype, int64_t rows, int64_t cols,
                                                   int64_t a_row, int64_t a_col, int64_t b_row,
                                                   int64_t b_col, MPI_Fint comm);

/* flags of tessera_redistribute_plan_create_ex, or-ed. RELABEL: the plan may write B with its
 * owners permuted, so that each rank keeps as much of op(A) as it can (a layout differing from
 * A's by a permutation of ranks then moves nothing); tessera_redistribute_plan_target and
 * tessera_redistribute_plan_relabelling say who holds what. Only for the whole of B, executed
 * with beta = 0 (B's old values stay on their ranks). */
typedef enum tessera_redistribute_flags {
  TESSERA_REDISTRIBUTE_RELABEL = 1
} tessera_redistribute_flags;
/* tessera_redistribute_plan_create with flags and a buffer bound: the plan's send and receive
 * buffers on this rank hold at most max_buffer_bytes together (0: the larger of its local blocks
 * of A and of B), the exchange going in rounds where it needs more; below one element per rank
 * it exchanges with, that much. */
TESSERA_API int tessera_redistribute_plan_create_ex(
    tessera_redistribute_plan* plan, tessera_layout a, tessera_layout b, tessera_matrix_op op,
    tessera_dtype dtype, int64_t rows, int64_t cols, int64_t a_row, int64_t a_col, int64_t b_row,
    int64_t b_col, int flags, int64_t max_buffer_bytes, MPI_Comm comm);
TESSERA_API int tessera_redistribute_plan_create_ex_f(tessera_redistribute_plan* plan,
                                                      tessera_layout a, tessera_layout b, int op,
                                                      int dtype, int64_t rows, int64_t cols,
                                                      int64_t a_row, int64_t a_col, int64_t b_row,
                                                      int64_t b_col, int flags,
                                                      int64_t max_buffer_bytes, MPI_Fint comm);
/* Where a redistribution's execute finds its blocks. */
typedef enum tessera_memory {
  TESSERA_MEMORY_HOST = 0,  /* host memory: the CPU path, on either backend */
  TESSERA_MEMORY_DEVICE = 1 /* the rank's GPU: the CUDA backend packs and unpacks there */
} tessera_memory;
/* tessera_redistribute_plan_create_ex on a chosen backend, with the blocks where `memory` says.
 * TESSERA_BACKEND_AUTO: CPU for host memory (without starting CUDA), CUDA for device memory.
 * Device memory needs a GPU on every rank and a build with CUDA (TESSERA_ERROR_NOT_COMPILED
 * otherwise); the messages still cross ranks through pinned host memory, so MPI need not be
 * CUDA-aware. execute then waits for the work queued on the legacy default stream and returns
 * with B complete; the results are the CPU's, bit for bit. (The _ex and plain creates are this
 * with TESSERA_BACKEND_AUTO and TESSERA_MEMORY_HOST.) */
TESSERA_API int tessera_redistribute_plan_create_on(
    tessera_redistribute_plan* plan, tessera_layout a, tessera_layout b, tessera_matrix_op op,
    tessera_dtype dtype, int64_t rows, int64_t cols, int64_t a_row, int64_t a_col, int64_t b_row,
    int64_t b_col, int flags, int64_t max_buffer_bytes, tessera_backend backend,
    tessera_memory memory, MPI_Comm comm);
TESSERA_API int tessera_redistribute_plan_create_on_f(
    tessera_redistribute_plan* plan, tessera_layout a, tessera_layout b, int op, int dtype,
    int64_t rows, int64_t cols, int64_t a_row, int64_t a_col, int64_t b_row, int64_t b_col,
    int flags, int64_t max_buffer_bytes, int backend, int memory, MPI_Fint comm);
/* The backend the plan resolved TESSERA_BACKEND_AUTO to (never AUTO). */
TESSERA_API int tessera_redistribute_plan_backend(tessera_redistribute_plan plan,
                                                  tessera_backend* backend);
/* The send plus receive buffer bytes the plan holds on this rank, and the rounds each execute
 * exchanges in (the same on every rank). */
TESSERA_API int tessera_redistribute_plan_buffer(tessera_redistribute_plan plan,
                                                 int64_t* buffer_bytes, int64_t* rounds);
/* relabelling[r] (nranks entries, the communicator's size): the rank that holds, in the layout
 * execute writes B in, what B's layout gives rank r; the identity without RELABEL. */
TESSERA_API int tessera_redistribute_plan_relabelling(tessera_redistribute_plan plan,
                                                      int* relabelling, int nranks);
/* The layout execute writes B in (B's own without RELABEL): a new handle for the caller to
 * destroy. Each rank's b must be its local block of this layout. */
TESSERA_API int tessera_redistribute_plan_target(tessera_redistribute_plan plan,
                                                 tessera_layout* target);

/* Reductions (as tessera_reduce_plan_create_missing; `missing` may be null) over a matrix in any
 * layout: execute takes this rank's local block of `layout` (host memory; null where the rank
 * holds nothing) and gives the same values, bit for bit, as the row-block plan over the same
 * matrix, at any rank count. tessera_reduce_plan_count, _execute and _destroy as for that plan.
 * Each execute redistributes the matrix to row blocks: the plan holds one row block per rank
 * (at most ceil(rows / P) x cols elements) and the redistribution's send and receive buffers
 * (the elements that travel: at most the local block out and the row block in), except for row
 * blocks with tight row-major local blocks (tessera_layout_create_rows, TESSERA_ROW_MAJOR),
 * which it reduces where they are. On
 * TESSERA_BACKEND_CUDA the row block is reduced on the GPU from host memory. Collective over
 * comm; the layout must be over comm's size. */
TESSERA_API int tessera_reduce_plan_create_layout(tessera_reduce_plan* plan, tessera_layout layout,
                                                  tessera_dtype dtype, MPI_Comm comm,
                                                  tessera_backend backend, const tessera_op* ops,
                                                  int nops, tessera_axis axis,
                                                  const tessera_missing* missing);
/* tessera_reduce_plan_create_layout with a Fortran communicator handle (MPI_Comm_c2f). */
TESSERA_API int tessera_reduce_plan_create_layout_f(tessera_reduce_plan* plan,
                                                    tessera_layout layout, int dtype, MPI_Fint comm,
                                                    int backend, const int* ops, int nops, int axis,
                                                    int skip_nan, const double* values,
                                                    int nvalues);

/* ---- HDF5 datasets read into and written from any layout ----
 *
 * A ScaLAPACK code loads and saves its matrix in one call each (see tessera/hdf5.hpp,
 * read_layout and write_layout):
 *
 *   tessera_layout_create_scalapack(&cyclic, desc, nprow, npcol, TESSERA_GRID_ROW_MAJOR, NULL, P);
 *   tessera_h5_read_layout("a.h5", "/A", cyclic, TESSERA_F64, a_local, 0, comm);
 *   tessera_h5_write_layout("b.h5", "/B", cyclic, TESSERA_F64, a_local, 0, comm);
 *
 * Collective over comm; the layout must be over comm's size and, for a read, of the dataset's
 * shape. block is this rank's local block (null where it holds nothing). The file is moved in
 * row blocks and redistributed: about three times rows * cols / P elements of extra memory per
 * rank for a layout that spreads the matrix evenly, or about memory_limit bytes when
 * memory_limit > 0 (0: no limit). write creates `file`
 * with the one dataset (replacing an existing file once complete). */
TESSERA_API int tessera_h5_read_layout(const char* file, const char* dataset, tessera_layout layout,
                                       tessera_dtype dtype, void* block, int64_t memory_limit,
                                       MPI_Comm comm);
TESSERA_API int tessera_h5_write_layout(const char* file, const char* dataset,
                                        tessera_layout layout, tessera_dtype dtype,
                                        const void* block, int64_t memory_limit, MPI_Comm comm);
/* The same with a Fortran communicator handle (MPI_Comm_c2f); file and dataset NUL-terminated. */
TESSERA_API int tessera_h5_read_layout_f(const char* file, const char* dataset,
                                         tessera_layout layout, int dtype, void* block,
                                         int64_t memory_limit, MPI_Fint comm);
TESSERA_API int tessera_h5_write_layout_f(const char* file, const char* dataset,
                                          tessera_layout layout, int dtype, const void* block,
                                          int64_t memory_limit, MPI_Fint comm);

#ifdef __cplusplus
}
#endif

#endif
