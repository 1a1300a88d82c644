// The C API's layouts and redistribution plans (tessera/tessera.h, "Layouts and redistribution
// between them"): handles over tessera::Layout and tessera::RedistributePlan. Creating a layout
// is local; creating and executing a plan are collective, their arguments checked on every rank
// together so that a bad one on one rank fails everywhere instead of leaving the others waiting.
#include <tessera/tessera.h>

#include <tessera/tessera.hpp>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "c_api_errors.hpp"
#include "c_api_layout.hpp"

struct tessera_redistribute_plan_s {
  tessera::RedistributePlan plan;
  MPI_Comm comm; // the application's, for the agreement on execute()'s arguments
};

namespace {

using tessera::c_api::guarded;
using tessera::c_api::require;

tessera::StorageOrder storage_of(int s) {
  require(s == TESSERA_ROW_MAJOR || s == TESSERA_COL_MAJOR,
          "storage must be TESSERA_ROW_MAJOR or TESSERA_COL_MAJOR");
  return s == TESSERA_ROW_MAJOR ? tessera::StorageOrder::RowMajor : tessera::StorageOrder::ColMajor;
}

tessera::GridOrder grid_order_of(int o) {
  require(o == TESSERA_GRID_ROW_MAJOR || o == TESSERA_GRID_COL_MAJOR,
          "the grid order must be TESSERA_GRID_ROW_MAJOR or TESSERA_GRID_COL_MAJOR");
  return o == TESSERA_GRID_ROW_MAJOR ? tessera::GridOrder::RowMajor : tessera::GridOrder::ColMajor;
}

tessera::MatrixOp matrix_op_of(int op) {
  require(op >= TESSERA_MATRIX_OP_NONE && op <= TESSERA_MATRIX_OP_CONJ_TRANSPOSE,
          "op must be TESSERA_MATRIX_OP_NONE, TESSERA_MATRIX_OP_TRANSPOSE or "
          "TESSERA_MATRIX_OP_CONJ_TRANSPOSE");
  return static_cast<tessera::MatrixOp>(op);
}

tessera::DType matrix_dtype_of(int t) {
  require(t >= TESSERA_F32 && t <= TESSERA_C128,
          "dtype must be TESSERA_F32, TESSERA_F64, TESSERA_C64 or TESSERA_C128");
  return static_cast<tessera::DType>(t);
}

tessera::Backend redistribute_backend_of(int b) {
  require(b >= TESSERA_BACKEND_AUTO && b <= TESSERA_BACKEND_CUDA,
          "backend must be TESSERA_BACKEND_AUTO, TESSERA_BACKEND_CPU or TESSERA_BACKEND_CUDA");
  return static_cast<tessera::Backend>(b);
}

tessera::Memory redistribute_memory_of(int m) {
  require(m == TESSERA_MEMORY_HOST || m == TESSERA_MEMORY_DEVICE,
          "memory must be TESSERA_MEMORY_HOST or TESSERA_MEMORY_DEVICE");
  return m == TESSERA_MEMORY_HOST ? tessera::Memory::Host : tessera::Memory::Device;
}

// Creates *layout from make(), leaving it null on failure.
template <class Make>
int create_layout(tessera_layout* layout, Make&& make) {
  if (layout)
    *layout = nullptr;
  return guarded([&] {
    require(layout != nullptr, "layout must not be null");
    *layout = new tessera_layout_s{make()};
  });
}

const tessera::Layout& layout_of(tessera_layout l) {
  require(l != nullptr, "layout must not be null");
  return l->layout;
}

template <class T>
void set(T* out, T value) {
  if (out)
    *out = value;
}

int execute(tessera_redistribute_plan plan, std::complex<double> alpha, const void* a,
            std::complex<double> beta, void* b, bool scalars_given) {
  return guarded([&] {
    require(plan != nullptr, "plan must not be null"); // without a plan, no communicator
    tessera::check_on_every_rank(plan->comm, [&] {
      require(scalars_given, "alpha and beta must not be null");
      require(!tessera::dtype_is_real(plan->plan.dtype()) ||
                  (alpha.imag() == 0 && beta.imag() == 0),
              "alpha and beta have imaginary parts, but the plan's dtype is real (f32 or f64)");
    });
    plan->plan.execute(a, b, alpha, beta);
  });
}

} // namespace

extern "C" {

int tessera_layout_create_rows(tessera_layout* layout, int64_t rows, int64_t cols, int nranks,
                               tessera_storage storage) {
  return create_layout(layout, [&] {
    return tessera::Layout::row_blocks({rows, cols}, nranks, storage_of(storage));
  });
}

int tessera_layout_create_cols(tessera_layout* layout, int64_t rows, int64_t cols, int nranks,
                               tessera_storage storage) {
  return create_layout(layout, [&] {
    return tessera::Layout::col_blocks({rows, cols}, nranks, storage_of(storage));
  });
}

int tessera_layout_create_2d(tessera_layout* layout, int64_t rows, int64_t cols, int pr, int pc,
                             tessera_grid_order order, tessera_storage storage, int nranks) {
  return create_layout(layout, [&] {
    return tessera::Layout::blocks_2d({rows, cols}, pr, pc, grid_order_of(order),
                                      storage_of(storage), nranks);
  });
}

int tessera_layout_create_block_cyclic(tessera_layout* layout, int64_t rows, int64_t cols,
                                       int64_t mb, int64_t nb, int pr, int pc, int rsrc, int csrc,
                                       tessera_grid_order order, int nranks, int64_t lld,
                                       tessera_storage storage) {
  return create_layout(layout, [&] {
    tessera::BlockCyclicSpec s;
    s.global = {rows, cols};
    s.mb = mb;
    s.nb = nb;
    s.pr = pr;
    s.pc = pc;
    s.rsrc = rsrc;
    s.csrc = csrc;
    s.grid_order = grid_order_of(order);
    s.nranks = nranks;
    s.lld = lld;
    s.storage = storage_of(storage);
    return tessera::Layout::block_cyclic(s);
  });
}

int tessera_layout_create_scalapack(tessera_layout* layout, const int* desc, int nprow, int npcol,
                                    tessera_grid_order order, const int* grid_ranks, int nranks) {
  return create_layout(layout, [&] {
    require(desc != nullptr, "desc must point to a ScaLAPACK descriptor (9 integers)");
    require(nprow > 0 && npcol > 0, "nprow and npcol must be positive (the BLACS grid's shape)");
    std::vector<int> ranks;
    if (grid_ranks)
      ranks.assign(grid_ranks, grid_ranks + static_cast<std::ptrdiff_t>(nprow) * npcol);
    return tessera::Layout::from_scalapack(desc, nprow, npcol, nranks, std::move(ranks),
                                           grid_order_of(order));
  });
}

int tessera_layout_create_grid(tessera_layout* layout, int64_t nblock_rows,
                               const int64_t* row_splits, int64_t nblock_cols,
                               const int64_t* col_splits, const int* owners, int nranks,
                               tessera_storage storage, int64_t lld) {
  return create_layout(layout, [&] {
    require(nblock_rows >= 0 && nblock_cols >= 0,
            "nblock_rows and nblock_cols must not be negative");
    require(row_splits && col_splits, "row_splits and col_splits must not be null");
    require(owners != nullptr || nblock_rows * nblock_cols == 0, "owners must not be null");
    std::vector<std::int64_t> r(row_splits, row_splits + nblock_rows + 1);
    std::vector<std::int64_t> c(col_splits, col_splits + nblock_cols + 1);
    std::vector<int> o;
    if (owners)
      o.assign(owners, owners + nblock_rows * nblock_cols);
    return tessera::Layout::grid(std::move(r), std::move(c), std::move(o), nranks,
                                 storage_of(storage), lld);
  });
}

int tessera_layout_destroy(tessera_layout layout) {
  return guarded([&] { delete layout; });
}

int tessera_layout_global(tessera_layout layout, int64_t* rows, int64_t* cols, int* nranks) {
  return guarded([&] {
    const tessera::Layout& l = layout_of(layout);
    set(rows, l.global().rows);
    set(cols, l.global().cols);
    set(nranks, l.nranks());
  });
}

int tessera_layout_local_block(tessera_layout layout, int rank, int64_t* rows, int64_t* cols,
                               int64_t* ld, tessera_storage* storage, int64_t* elements) {
  return guarded([&] {
    const tessera::Layout& l = layout_of(layout);
    require(rank >= 0 && rank < l.nranks(), "rank must be one of the layout's ranks");
    const tessera::Shape s = l.local_shape(rank);
    set(rows, s.rows);
    set(cols, s.cols);
    set(ld, l.leading_dimension(rank));
    set(storage,
        l.storage() == tessera::StorageOrder::RowMajor ? TESSERA_ROW_MAJOR : TESSERA_COL_MAJOR);
    set(elements, s.empty() ? std::int64_t{0} : l.local_extent(rank));
  });
}

int tessera_layout_blocks(tessera_layout layout, int64_t* nblock_rows, int64_t* nblock_cols) {
  return guarded([&] {
    const tessera::Layout& l = layout_of(layout);
    set(nblock_rows, l.block_rows());
    set(nblock_cols, l.block_cols());
  });
}

int tessera_layout_block(tessera_layout layout, int64_t bi, int64_t bj, int64_t* row, int64_t* rows,
                         int64_t* col, int64_t* cols, int* owner, int64_t* local_row,
                         int64_t* local_col) {
  return guarded([&] {
    const tessera::Layout& l = layout_of(layout);
    require(bi >= 0 && bi < l.block_rows() && bj >= 0 && bj < l.block_cols(),
            "block (bi, bj) must be inside the layout's grid of blocks (tessera_layout_blocks)");
    const auto& rs = l.row_splits();
    const auto& cs = l.col_splits();
    const auto i = static_cast<std::size_t>(bi), j = static_cast<std::size_t>(bj);
    set(row, rs[i]);
    set(rows, rs[i + 1] - rs[i]);
    set(col, cs[j]);
    set(cols, cs[j + 1] - cs[j]);
    set(owner, l.block_owner(bi, bj));
    set(local_row, l.block_local_row(bi, bj));
    set(local_col, l.block_local_col(bi, bj));
  });
}

int tessera_layout_locate(tessera_layout layout, int64_t i, int64_t j, int* rank,
                          int64_t* local_row, int64_t* local_col) {
  return guarded([&] {
    const tessera::Layout& l = layout_of(layout);
    require(i >= 0 && i < l.global().rows && j >= 0 && j < l.global().cols,
            "(i, j) must be inside the global matrix");
    const tessera::LocalIndex x = l.local_index(i, j);
    set(rank, x.rank);
    set(local_row, x.row);
    set(local_col, x.col);
  });
}

int tessera_redistribute_plan_create(tessera_redistribute_plan* plan, tessera_layout a,
                                     tessera_layout b, tessera_matrix_op op, tessera_dtype dtype,
                                     int64_t rows, int64_t cols, int64_t a_row, int64_t a_col,
                                     int64_t b_row, int64_t b_col, MPI_Comm comm) {
  return tessera_redistribute_plan_create_ex(plan, a, b, op, dtype, rows, cols, a_row, a_col, b_row,
                                             b_col, 0, 0, comm);
}

int tessera_redistribute_plan_create_ex(tessera_redistribute_plan* plan, tessera_layout a,
                                        tessera_layout b, tessera_matrix_op op, tessera_dtype dtype,
                                        int64_t rows, int64_t cols, int64_t a_row, int64_t a_col,
                                        int64_t b_row, int64_t b_col, int flags,
                                        int64_t max_buffer_bytes, MPI_Comm comm) {
  return tessera_redistribute_plan_create_on(plan, a, b, op, dtype, rows, cols, a_row, a_col, b_row,
                                             b_col, flags, max_buffer_bytes, TESSERA_BACKEND_AUTO,
                                             TESSERA_MEMORY_HOST, comm);
}

int tessera_redistribute_plan_create_on(tessera_redistribute_plan* plan, tessera_layout a,
                                        tessera_layout b, tessera_matrix_op op, tessera_dtype dtype,
                                        int64_t rows, int64_t cols, int64_t a_row, int64_t a_col,
                                        int64_t b_row, int64_t b_col, int flags,
                                        int64_t max_buffer_bytes, tessera_backend backend,
                                        tessera_memory memory, MPI_Comm comm) {
  if (plan)
    *plan = nullptr;
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    require(comm != MPI_COMM_NULL, "the communicator is MPI_COMM_NULL, expected a communicator");
    tessera::RedistributeOptions o;
    tessera::DType t{};
    tessera::Backend on{};
    // Checked on every rank together: the plan's constructor is collective.
    tessera::check_on_every_rank(comm, [&] {
      require(a != nullptr && b != nullptr, "the layouts a and b must not be null");
      o.op = matrix_op_of(op);
      t = matrix_dtype_of(dtype);
      on = redistribute_backend_of(backend);
      o.memory = redistribute_memory_of(memory);
      require(a_row >= 0 && a_col >= 0 && b_row >= 0 && b_col >= 0,
              "the sub-matrix corners (a_row, a_col, b_row, b_col) must not be negative");
      require((flags & ~TESSERA_REDISTRIBUTE_RELABEL) == 0,
              "flags must be 0 or TESSERA_REDISTRIBUTE_RELABEL");
      require(max_buffer_bytes >= 0, "max_buffer_bytes must not be negative (0: one local block)");
    });
    o.a_row = a_row;
    o.a_col = a_col;
    o.b_row = b_row;
    o.b_col = b_col;
    o.rows = rows < 0 || cols < 0 ? -1 : rows;
    o.cols = rows < 0 || cols < 0 ? -1 : cols;
    o.relabel = (flags & TESSERA_REDISTRIBUTE_RELABEL) != 0;
    o.max_buffer_bytes = max_buffer_bytes;
    *plan = new tessera_redistribute_plan_s{
        tessera::RedistributePlan(a->layout, b->layout, t, comm, on, o), comm};
  });
}

int tessera_redistribute_plan_create_on_f(tessera_redistribute_plan* plan, tessera_layout a,
                                          tessera_layout b, int op, int dtype, int64_t rows,
                                          int64_t cols, int64_t a_row, int64_t a_col, int64_t b_row,
                                          int64_t b_col, int flags, int64_t max_buffer_bytes,
                                          int backend, int memory, MPI_Fint comm) {
  MPI_Comm c = MPI_COMM_NULL;
  if (plan)
    *plan = nullptr;
  const int rc = guarded([&] { c = tessera::comm_from_fortran(comm); });
  if (rc != TESSERA_OK)
    return rc;
  return tessera_redistribute_plan_create_on(
      plan, a, b, static_cast<tessera_matrix_op>(op), static_cast<tessera_dtype>(dtype), rows, cols,
      a_row, a_col, b_row, b_col, flags, max_buffer_bytes, static_cast<tessera_backend>(backend),
      static_cast<tessera_memory>(memory), c);
}

int tessera_redistribute_plan_backend(tessera_redistribute_plan plan, tessera_backend* backend) {
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    set(backend, static_cast<tessera_backend>(plan->plan.backend()));
  });
}

int tessera_redistribute_plan_create_f(tessera_redistribute_plan* plan, tessera_layout a,
                                       tessera_layout b, int op, int dtype, int64_t rows,
                                       int64_t cols, int64_t a_row, int64_t a_col, int64_t b_row,
                                       int64_t b_col, MPI_Fint comm) {
  return tessera_redistribute_plan_create_ex_f(plan, a, b, op, dtype, rows, cols, a_row, a_col,
                                               b_row, b_col, 0, 0, comm);
}

int tessera_redistribute_plan_create_ex_f(tessera_redistribute_plan* plan, tessera_layout a,
                                          tessera_layout b, int op, int dtype, int64_t rows,
                                          int64_t cols, int64_t a_row, int64_t a_col, int64_t b_row,
                                          int64_t b_col, int flags, int64_t max_buffer_bytes,
                                          MPI_Fint comm) {
  MPI_Comm c = MPI_COMM_NULL;
  if (plan)
    *plan = nullptr;
  const int rc = guarded([&] { c = tessera::comm_from_fortran(comm); });
  if (rc != TESSERA_OK)
    return rc;
  return tessera_redistribute_plan_create_ex(plan, a, b, static_cast<tessera_matrix_op>(op),
                                             static_cast<tessera_dtype>(dtype), rows, cols, a_row,
                                             a_col, b_row, b_col, flags, max_buffer_bytes, c);
}

int tessera_redistribute_plan_execute(tessera_redistribute_plan plan, double alpha, const void* a,
                                      double beta, void* b) {
  return execute(plan, alpha, a, beta, b, true);
}

int tessera_redistribute_plan_execute_complex(tessera_redistribute_plan plan, const double* alpha,
                                              const void* a, const double* beta, void* b) {
  const bool given = alpha != nullptr && beta != nullptr;
  return execute(plan, given ? std::complex<double>(alpha[0], alpha[1]) : 0.0, a,
                 given ? std::complex<double>(beta[0], beta[1]) : 0.0, b, given);
}

int tessera_redistribute_plan_traffic(tessera_redistribute_plan plan, int64_t* sent,
                                      int64_t* received, int64_t* kept, int64_t* sent_lower_bound) {
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    const tessera::RedistributeTraffic& t = plan->plan.traffic();
    set(sent, t.sent);
    set(received, t.received);
    set(kept, t.kept);
    set(sent_lower_bound, t.sent_lower_bound);
  });
}

int tessera_redistribute_plan_buffer(tessera_redistribute_plan plan, int64_t* buffer_bytes,
                                     int64_t* rounds) {
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    const tessera::RedistributeTraffic& t = plan->plan.traffic();
    set(buffer_bytes, t.buffer_bytes);
    set(rounds, t.rounds);
  });
}

int tessera_redistribute_plan_relabelling(tessera_redistribute_plan plan, int* relabelling,
                                          int nranks) {
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    const std::vector<int>& r = plan->plan.relabelling();
    require(nranks == static_cast<int>(r.size()),
            "nranks must be the plan's number of ranks (the communicator's size)");
    require(relabelling != nullptr || r.empty(), "relabelling must not be null");
    std::copy(r.begin(), r.end(), relabelling);
  });
}

int tessera_redistribute_plan_target(tessera_redistribute_plan plan, tessera_layout* target) {
  if (target)
    *target = nullptr;
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    require(target != nullptr, "target must not be null");
    *target = new tessera_layout_s{plan->plan.target()};
  });
}

int tessera_redistribute_plan_destroy(tessera_redistribute_plan plan) {
  return guarded([&] { delete plan; });
}

} // extern "C"

// ---- HDF5 datasets read into and written from any layout (tessera::h5::read_layout) ----

namespace {

// The checks every rank runs together before the collective file access.
tessera::DType checked_io_dtype(const char* file, const char* dataset, tessera_layout layout,
                                int dtype, int64_t memory_limit, MPI_Comm comm) {
  require(comm != MPI_COMM_NULL, "the communicator is MPI_COMM_NULL, expected a communicator");
  tessera::DType t{};
  tessera::check_on_every_rank(comm, [&] {
    require(file != nullptr && dataset != nullptr, "file and dataset must not be null");
    require(layout != nullptr, "the layout must not be null");
    require(memory_limit >= 0, "memory_limit must not be negative (0: no limit)");
    t = matrix_dtype_of(dtype);
  });
  return t;
}

} // namespace

extern "C" {

int tessera_h5_read_layout(const char* file, const char* dataset, tessera_layout layout,
                           tessera_dtype dtype, void* block, int64_t memory_limit, MPI_Comm comm) {
  return guarded([&] {
    const tessera::DType t = checked_io_dtype(file, dataset, layout, dtype, memory_limit, comm);
    tessera::h5::read_layout(file, dataset, layout->layout, t, block, comm, memory_limit);
  });
}

int tessera_h5_write_layout(const char* file, const char* dataset, tessera_layout layout,
                            tessera_dtype dtype, const void* block, int64_t memory_limit,
                            MPI_Comm comm) {
  return guarded([&] {
    const tessera::DType t = checked_io_dtype(file, dataset, layout, dtype, memory_limit, comm);
    tessera::h5::write_layout(file, dataset, layout->layout, t, block, comm, {}, memory_limit);
  });
}

int tessera_h5_read_layout_f(const char* file, const char* dataset, tessera_layout layout,
                             int dtype, void* block, int64_t memory_limit, MPI_Fint comm) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = guarded([&] { c = tessera::comm_from_fortran(comm); });
  if (rc != TESSERA_OK)
    return rc;
  return tessera_h5_read_layout(file, dataset, layout, static_cast<tessera_dtype>(dtype), block,
                                memory_limit, c);
}

int tessera_h5_write_layout_f(const char* file, const char* dataset, tessera_layout layout,
                              int dtype, const void* block, int64_t memory_limit, MPI_Fint comm) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = guarded([&] { c = tessera::comm_from_fortran(comm); });
  if (rc != TESSERA_OK)
    return rc;
  return tessera_h5_write_layout(file, dataset, layout, static_cast<tessera_dtype>(dtype), block,
                                 memory_limit, c);
}

} // extern "C"
