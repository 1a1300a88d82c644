// The C API (tessera/tessera.h): each function catches every exception, keeps its message for
// tessera_last_error() and returns the code of its kind. Arguments that can be wrong on one rank
// only are checked by every rank together (tessera::check_on_every_rank, and the plans' own
// execute()), so such an error is returned on every rank instead of leaving the others waiting.
#include <tessera/tessera.h>

#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "c_api_errors.hpp"
#include "c_api_layout.hpp"
#include "mpi/communicator.hpp"
#include "mpi/fortran_comm.hpp"

struct tessera_transpose_plan_s {
  tessera::TransposePlan plan;
};
struct tessera_permute_plan_s {
  tessera::PermutePlan plan;
};
struct tessera_reduce_plan_s {
  tessera::ReducePlan plan;
  std::int64_t count;
  MPI_Comm comm; // the application's, for the agreement on execute()'s arguments
};

namespace {

using tessera::c_api::guarded;
using tessera::c_api::require;

tessera::DType dtype_of(int t) {
  require(t >= TESSERA_F32 && t <= TESSERA_C128,
          "dtype must be TESSERA_F32, TESSERA_F64, TESSERA_C64 or TESSERA_C128");
  return static_cast<tessera::DType>(t);
}
tessera::DType permute_dtype_of(int t) {
  require(t >= TESSERA_F32 && t <= TESSERA_U64,
          "dtype must be one of TESSERA_F32, TESSERA_F64, TESSERA_C64, TESSERA_C128, TESSERA_I8 "
          "... TESSERA_I64, TESSERA_U8 ... TESSERA_U64");
  return static_cast<tessera::DType>(t);
}
tessera::Backend backend_of(int b) {
  require(b >= TESSERA_BACKEND_AUTO && b <= TESSERA_BACKEND_CUDA,
          "backend must be TESSERA_BACKEND_AUTO, TESSERA_BACKEND_CPU or TESSERA_BACKEND_CUDA");
  return static_cast<tessera::Backend>(b);
}
tessera::Axis axis_of(int a) {
  require(a >= TESSERA_AXIS_ALL && a <= TESSERA_AXIS_COLS,
          "axis must be TESSERA_AXIS_ALL, TESSERA_AXIS_ROWS or TESSERA_AXIS_COLS");
  return static_cast<tessera::Axis>(a);
}
std::vector<tessera::Op> ops_of(const int* ops, int nops) {
  require(ops != nullptr && nops > 0, "a reduction needs at least one operation (ops, nops > 0)");
  std::vector<tessera::Op> r;
  for (int k = 0; k < nops; ++k) {
    require(ops[k] >= TESSERA_OP_SUM && ops[k] <= TESSERA_OP_COUNT,
            "ops[k] must be one of TESSERA_OP_SUM ... TESSERA_OP_COUNT");
    r.push_back(static_cast<tessera::Op>(ops[k]));
  }
  return r;
}
tessera::BlockDistribution dist_of(std::int64_t rows, std::int64_t cols, MPI_Comm comm) {
  require(comm != MPI_COMM_NULL, "the communicator is MPI_COMM_NULL, expected a communicator");
  return tessera::BlockDistribution({rows, cols}, tessera::mpi::comm_size(comm));
}

// The options of a reduction that skips `missing` (null: nothing).
tessera::ReduceOptions reduce_options_of(const tessera_missing* missing) {
  tessera::ReduceOptions options;
  if (missing) {
    require(missing->nvalues >= 0, "missing->nvalues must not be negative");
    require(missing->nvalues == 0 || missing->values != nullptr,
            "missing->values must not be null when missing->nvalues > 0");
    options.missing.skip_nan = missing->skip_nan != 0;
    if (missing->nvalues > 0)
      options.missing.values.assign(missing->values, missing->values + missing->nvalues);
  }
  return options;
}

// The number of values a reduction gives per op along axis a.
std::int64_t count_of(tessera::Axis a, std::int64_t rows, std::int64_t cols) {
  return a == tessera::Axis::All ? 1 : a == tessera::Axis::Rows ? rows : cols;
}

// This rank's input or output block of a permutation, into the pointers that are not null.
int permute_block_of(tessera_permute_plan plan, bool input, int64_t* begin, int64_t* length,
                     int64_t* elements) {
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    const tessera::PermuteBlock& b = input ? plan->plan.input_block() : plan->plan.output_block();
    if (begin)
      *begin = b.begin;
    if (length)
      *length = b.length;
    if (elements)
      *elements = b.elements;
  });
}

} // namespace

extern "C" {

const char* tessera_last_error(void) {
  return tessera::c_api::last_error().c_str();
}

int tessera_last_error_copy(char* buf, int len) {
  const std::string& message = tessera::c_api::last_error();
  const int n = static_cast<int>(message.size());
  if (buf && len > 0) {
    std::memset(buf, 0, static_cast<std::size_t>(len));
    std::memcpy(buf, message.data(), static_cast<std::size_t>(std::min(n, len)));
  }
  return n;
}

const char* tessera_version(void) {
  return tessera::version();
}

int tessera_set_log_level(tessera_log_level level) {
  return guarded([&] {
    require(level >= TESSERA_LOG_OFF && level <= TESSERA_LOG_DEBUG,
            "level must be TESSERA_LOG_OFF ... TESSERA_LOG_DEBUG");
    tessera::set_log_level(static_cast<tessera::LogLevel>(level));
  });
}

int64_t tessera_block_begin(int64_t rows, int nranks, int rank) {
  if (nranks <= 0 || rows < 0 || rank < 0 || rank > nranks)
    return -1;
  return tessera::BlockDistribution({rows, 1}, nranks).begin(rank);
}

int64_t tessera_block_rows(int64_t rows, int nranks, int rank) {
  if (nranks <= 0 || rows < 0 || rank < 0 || rank >= nranks)
    return -1;
  return tessera::BlockDistribution({rows, 1}, nranks).rows(rank);
}

int tessera_transpose_plan_create(tessera_transpose_plan* plan, int64_t rows, int64_t cols,
                                  tessera_dtype dtype, MPI_Comm comm, tessera_backend backend) {
  if (plan)
    *plan = nullptr;
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    *plan = new tessera_transpose_plan_s{tessera::TransposePlan(
        dist_of(rows, cols, comm), dtype_of(dtype), comm, backend_of(backend))};
  });
}

int tessera_transpose_plan_create_f(tessera_transpose_plan* plan, int64_t rows, int64_t cols,
                                    int dtype, MPI_Fint comm, int backend) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = guarded([&] { c = tessera::mpi::comm_from_fortran(comm); });
  if (rc != TESSERA_OK)
    return rc;
  return tessera_transpose_plan_create(plan, rows, cols, static_cast<tessera_dtype>(dtype), c,
                                       static_cast<tessera_backend>(backend));
}

int tessera_transpose_plan_execute(tessera_transpose_plan plan, const void* in, void* out) {
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    plan->plan.execute(in, out);
  });
}

int tessera_transpose_plan_destroy(tessera_transpose_plan plan) {
  return guarded([&] { delete plan; });
}

int tessera_permute_plan_create(tessera_permute_plan* plan, int rank, const int64_t* shape,
                                const int* axes, tessera_dtype dtype, MPI_Comm comm,
                                tessera_backend backend) {
  if (plan)
    *plan = nullptr;
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    require(comm != MPI_COMM_NULL, "the communicator is MPI_COMM_NULL, expected a communicator");
    static_assert(static_cast<int>(tessera::DType::u64) == TESSERA_U64);
    // Checked on every rank together, as the plan checks the permutation itself.
    tessera::DType t{};
    tessera::Backend b{};
    tessera::check_on_every_rank(comm, [&] {
      require(rank >= 0 && (rank == 0 || (shape != nullptr && axes != nullptr)),
              "shape and axes must point to `rank` values each");
      t = permute_dtype_of(dtype);
      b = backend_of(backend);
    });
    *plan = new tessera_permute_plan_s{
        tessera::PermutePlan(std::vector<std::int64_t>(shape, shape + rank),
                             std::vector<int>(axes, axes + rank), t, comm, b)};
  });
}

int tessera_permute_plan_create_f(tessera_permute_plan* plan, int rank, const int64_t* shape,
                                  const int* axes, int dtype, MPI_Fint comm, int backend) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = guarded([&] { c = tessera::mpi::comm_from_fortran(comm); });
  if (rc != TESSERA_OK)
    return rc;
  return tessera_permute_plan_create(plan, rank, shape, axes, static_cast<tessera_dtype>(dtype), c,
                                     static_cast<tessera_backend>(backend));
}

int tessera_permute_plan_input_block(tessera_permute_plan plan, int64_t* begin, int64_t* length,
                                     int64_t* elements) {
  return permute_block_of(plan, true, begin, length, elements);
}

int tessera_permute_plan_output_block(tessera_permute_plan plan, int64_t* begin, int64_t* length,
                                      int64_t* elements) {
  return permute_block_of(plan, false, begin, length, elements);
}

int tessera_permute_plan_execute(tessera_permute_plan plan, const void* in, void* out) {
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    plan->plan.execute(in, out);
  });
}

int tessera_permute_plan_destroy(tessera_permute_plan plan) {
  return guarded([&] { delete plan; });
}

int tessera_reduce_plan_create(tessera_reduce_plan* plan, int64_t rows, int64_t cols,
                               tessera_dtype dtype, MPI_Comm comm, tessera_backend backend,
                               const tessera_op* ops, int nops, tessera_axis axis) {
  return tessera_reduce_plan_create_missing(plan, rows, cols, dtype, comm, backend, ops, nops, axis,
                                            nullptr);
}

int tessera_reduce_plan_create_missing(tessera_reduce_plan* plan, int64_t rows, int64_t cols,
                                       tessera_dtype dtype, MPI_Comm comm, tessera_backend backend,
                                       const tessera_op* ops, int nops, tessera_axis axis,
                                       const tessera_missing* missing) {
  if (plan)
    *plan = nullptr;
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    static_assert(sizeof(tessera_op) == sizeof(int));
    const auto a = axis_of(axis);
    *plan = new tessera_reduce_plan_s{
        tessera::ReducePlan(dist_of(rows, cols, comm), dtype_of(dtype), comm, backend_of(backend),
                            ops_of(reinterpret_cast<const int*>(ops), nops), a,
                            reduce_options_of(missing)),
        count_of(a, rows, cols), comm};
  });
}

int tessera_reduce_plan_create_layout(tessera_reduce_plan* plan, tessera_layout layout,
                                      tessera_dtype dtype, MPI_Comm comm, tessera_backend backend,
                                      const tessera_op* ops, int nops, tessera_axis axis,
                                      const tessera_missing* missing) {
  if (plan)
    *plan = nullptr;
  return guarded([&] {
    require(plan != nullptr, "plan must not be null");
    require(comm != MPI_COMM_NULL, "the communicator is MPI_COMM_NULL, expected a communicator");
    tessera::DType t{};
    tessera::Backend b{};
    std::vector<tessera::Op> o;
    tessera::Axis a{};
    tessera::ReduceOptions options;
    // Checked on every rank together: the plan's constructor is collective.
    tessera::check_on_every_rank(comm, [&] {
      require(layout != nullptr, "the layout must not be null");
      t = dtype_of(dtype);
      b = backend_of(backend);
      o = ops_of(reinterpret_cast<const int*>(ops), nops);
      a = axis_of(axis);
      options = reduce_options_of(missing);
    });
    const tessera::Shape& g = layout->layout.global();
    *plan = new tessera_reduce_plan_s{
        tessera::ReducePlan(layout->layout, t, comm, b, std::move(o), a, options),
        count_of(a, g.rows, g.cols), comm};
  });
}

int tessera_reduce_plan_create_f(tessera_reduce_plan* plan, int64_t rows, int64_t cols, int dtype,
                                 MPI_Fint comm, int backend, const int* ops, int nops, int axis) {
  return tessera_reduce_plan_create_missing_f(plan, rows, cols, dtype, comm, backend, ops, nops,
                                              axis, 0, nullptr, 0);
}

int tessera_reduce_plan_create_missing_f(tessera_reduce_plan* plan, int64_t rows, int64_t cols,
                                         int dtype, MPI_Fint comm, int backend, const int* ops,
                                         int nops, int axis, int skip_nan, const double* values,
                                         int nvalues) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = guarded([&] { c = tessera::mpi::comm_from_fortran(comm); });
  if (rc != TESSERA_OK)
    return rc;
  const tessera_missing missing{skip_nan, values, nvalues};
  return tessera_reduce_plan_create_missing(
      plan, rows, cols, static_cast<tessera_dtype>(dtype), c, static_cast<tessera_backend>(backend),
      reinterpret_cast<const tessera_op*>(ops), nops, static_cast<tessera_axis>(axis), &missing);
}

int tessera_reduce_plan_create_layout_f(tessera_reduce_plan* plan, tessera_layout layout, int dtype,
                                        MPI_Fint comm, int backend, const int* ops, int nops,
                                        int axis, int skip_nan, const double* values, int nvalues) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = guarded([&] { c = tessera::mpi::comm_from_fortran(comm); });
  if (rc != TESSERA_OK)
    return rc;
  const tessera_missing missing{skip_nan, values, nvalues};
  return tessera_reduce_plan_create_layout(
      plan, layout, static_cast<tessera_dtype>(dtype), c, static_cast<tessera_backend>(backend),
      reinterpret_cast<const tessera_op*>(ops), nops, static_cast<tessera_axis>(axis), &missing);
}

int64_t tessera_reduce_plan_count(tessera_reduce_plan plan) {
  return plan ? plan->count : -1;
}

int tessera_reduce_plan_execute(tessera_reduce_plan plan, const void* block, double* values) {
  return guarded([&] {
    require(plan != nullptr, "plan must not be null"); // without a plan, no communicator
    tessera::check_on_every_rank(plan->comm,
                                 [&] { require(values != nullptr, "values must not be null"); });
    const tessera::ReduceResult r = plan->plan.execute(block);
    double* at = values;
    for (const auto& v : r.values)
      at = std::copy(v.begin(), v.end(), at);
  });
}

int tessera_reduce_plan_destroy(tessera_reduce_plan plan) {
  return guarded([&] { delete plan; });
}

int tessera_h5_read_rows(const char* file, const char* dataset, int64_t rows, int64_t cols,
                         tessera_dtype dtype, void* block, MPI_Comm comm) {
  return guarded([&] {
    require(file && dataset, "file and dataset must not be null");
    tessera::h5::read_rows(file, dataset, dist_of(rows, cols, comm), dtype_of(dtype), block, comm);
  });
}

int tessera_h5_write_rows(const char* file, const char* dataset, int64_t rows, int64_t cols,
                          tessera_dtype dtype, const void* block, MPI_Comm comm) {
  return guarded([&] {
    require(file && dataset, "file and dataset must not be null");
    tessera::h5::write_rows(file, dataset, dist_of(rows, cols, comm), dtype_of(dtype), block, comm);
  });
}

} // extern "C"
