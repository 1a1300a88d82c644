// Launchers of the reduction kernels: op and type dispatch, launch sizes, workspace layout.
#include "cuda/reduce.hpp"
#include "cuda/reduce_cols.cuh"
#include "cuda/reduce_fused.cuh"
#include "cuda/reduce_kernels.cuh"

#include <bit>

namespace tessera::cuda {

namespace detail {
namespace {

constexpr std::size_t kHeader = 256; // counters at the start of the workspace

template <class G>
decltype(auto) dispatch_fn(Op op, G&& g) {
  switch (op) {
  case Op::Sum:
  case Op::Mean:
    return g(std::integral_constant<Fn, Fn::Sum>{});
  case Op::Norm1:
    return g(std::integral_constant<Fn, Fn::Abs>{});
  case Op::Norm2:
    return g(std::integral_constant<Fn, Fn::Sq>{});
  case Op::Min:
    return g(std::integral_constant<Fn, Fn::Min>{});
  case Op::Max:
    return g(std::integral_constant<Fn, Fn::Max>{});
  case Op::NormInf:
    break;
  }
  return g(std::integral_constant<Fn, Fn::AbsMax>{});
}

template <class G>
decltype(auto) dispatch_type(DType t, G&& g) {
  if (t == DType::f32)
    return g(float{});
  TESSERA_CUDA_REQUIRE(t == DType::f64,
                       "cuda reductions take f32 or f64 data, not " + std::string(dtype_name(t)));
  return g(double{});
}

int finish_code(Op op) {
  return op == Op::Mean ? 1 : op == Op::Norm2 ? 2 : 0;
}

void check_block(const char* what, DType t, const void* a, i64 rows, i64 cols, i64 ld) {
  const std::string w = std::string("cuda::") + what + " of a " + shape_str(rows, cols) + " " +
                        std::string(dtype_name(t)) + " block: ";
  TESSERA_CUDA_REQUIRE(rows >= 0 && cols >= 0, w + "negative shape");
  TESSERA_CUDA_REQUIRE(rows == 0 || cols == 0 || ld >= cols,
                       w + "ld " + std::to_string(ld) + " < cols");
  TESSERA_CUDA_REQUIRE(rows == 0 || cols == 0 || a != nullptr, w + "null data pointer");
  TESSERA_CUDA_REQUIRE(aligned_to(a, dtype_size(t)), w + "data pointer not aligned to its type");
}

// Blocks that fill the device once for a grid-striding kernel.
template <class K>
unsigned resident_blocks(K kernel, int threads) {
  int per_sm = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  return static_cast<unsigned>(std::max(1, per_sm) * sm_count());
}

unsigned blocks_for(i64 n, int threads, i64 cap = 1 << 20) {
  return static_cast<unsigned>(std::max<i64>(1, std::min<i64>((n + threads - 1) / threads, cap)));
}

// 128-lane chunks in flight per warp: 64 (f32) or 128 (f64) bytes per thread.
template <class T>
constexpr int row_unroll() {
  return 4;
}

// Threads per row: rows of at most 32 columns go eight threads to a row, four rows to a warp.
constexpr int kNarrowCols = 32;

// Launches a row kernel (row_values_kernel or fused_row_values_kernel, the TPR argument last)
// with as many blocks as the device holds at once, or fewer for few rows.
template <class K>
void launch_row_kernel(cudaStream_t s, K kernel, i64 rows, int rows_per_warp, auto... args) {
  static const unsigned resident = resident_blocks(kernel, 256);
  const i64 warps = (rows + rows_per_warp - 1) / rows_per_warp;
  const unsigned grid = std::min<unsigned>(resident, static_cast<unsigned>((warps + 7) / 8));
  kernel<<<grid, 256, 0, s>>>(args...);
  CHECK_CUDA_LAUNCH();
}

template <class T, Fn F>
void launch_rows(cudaStream_t s, const T* a, i64 rows, i64 cols, i64 ld, double* rowvals, int code,
                 double count) {
  if (cols <= kNarrowCols)
    launch_row_kernel(s, row_values_kernel<T, F, row_unroll<T>(), 8>, rows, warp_rows<8>(), a, rows,
                      cols, ld, rowvals, code, count);
  else
    launch_row_kernel(s, row_values_kernel<T, F, row_unroll<T>(), 32>, rows, 1, a, rows, cols, ld,
                      rowvals, code, count);
}

// Blocks for the column partials: one thread per (group, vector of columns).
unsigned col_group_blocks(i64 rows, i64 cols, int v) {
  const i64 items = ((rows + 63) / 64) * ((cols + v - 1) / v);
  return static_cast<unsigned>(std::min<i64>((items + 255) / 256, 1LL << 30));
}

template <class T, Fn F>
void launch_col_groups(cudaStream_t s, const T* a, i64 rows, i64 cols, i64 ld, double* out) {
  constexpr int V = 16 / sizeof(T);
  const bool vec = aligned_to(a, 16) && (rows == 1 || ld % V == 0);
  const unsigned grid = col_group_blocks(rows, cols, vec ? V : 1);
  if (vec)
    col_groups_kernel<T, F, true><<<grid, 256, 0, s>>>(a, rows, cols, ld, out);
  else
    col_groups_kernel<T, F, false><<<grid, 256, 0, s>>>(a, rows, cols, ld, out);
  CHECK_CUDA_LAUNCH();
}

template <Fn F>
void launch_combine(cudaStream_t s, const double* groups, i64 ngroups, i64 cols, double* acc,
                    bool accumulate, int code, double count) {
  // Few columns of many groups: a thread per column would leave the device nearly idle while
  // it waits for each batch of its sequential fold, so a warp takes each column.
  if (ngroups > 1024 && cols < 16384)
    combine_groups_warp_kernel<F>
        <<<blocks_for(cols, 8), 256, 0, s>>>(groups, ngroups, cols, acc, accumulate, code, count);
  else
    combine_groups_kernel<F>
        <<<blocks_for(cols, 128), 128, 0, s>>>(groups, ngroups, cols, acc, accumulate, code, count);
  CHECK_CUDA_LAUNCH();
}

template <Fn F>
void launch_finish(cudaStream_t s, double* v, i64 n, bool from_identity, int code, double count) {
  if (n == 0)
    return;
  finish_kernel<F><<<blocks_for(n, 256), 256, 0, s>>>(v, n, from_identity, code, count);
  CHECK_CUDA_LAUNCH();
}

struct Layout {
  unsigned* counter;        // blocks done (All)
  unsigned* block_counters; // rows done per 64-row block (All)
  double* doubles;          // row values and block partials (All), group partials (Cols)
};

std::size_t counter_bytes(i64 counters) {
  return (4 * static_cast<std::size_t>(counters) + 255) / 256 * 256;
}

i64 groups_of(i64 rows) {
  return (std::max<i64>(rows, 0) + 63) / 64;
}

// Doubles a reduction of `ops` fused ops (1: a plain one) needs after the counters.
std::size_t doubles_for(Axis axis, i64 rows, i64 cols, int ops = 1) {
  const i64 groups = groups_of(rows), n = std::max<i64>(rows, 0);
  if (axis == Axis::All)
    return static_cast<std::size_t>(ops * n + groups);
  if (axis == Axis::Cols)
    return static_cast<std::size_t>(ops * groups * std::max<i64>(cols, 0));
  return ops > 1 ? static_cast<std::size_t>(ops * n) : 0;
}

Layout layout(ReduceWorkspace& ws, Axis axis, i64 rows, i64 cols, int ops = 1) {
  const bool fits =
      ws.data() != nullptr && ws.double_capacity() >= 8 * doubles_for(axis, rows, cols, ops);
  TESSERA_CUDA_REQUIRE(fits, "cuda reduction workspace of " + std::to_string(ws.bytes()) +
                                 " bytes is too small for a " + shape_str(rows, cols) +
                                 " reduction (call reserve())");
  auto* base = static_cast<unsigned char*>(ws.data());
  return {reinterpret_cast<unsigned*>(base), reinterpret_cast<unsigned*>(base + kHeader),
          reinterpret_cast<double*>(base + kHeader + counter_bytes(ws.counter_capacity()))};
}

// The All axis with optional finish; from_identity = !accumulate.
void all_impl(cudaStream_t s, Op op, DType t, const void* a, i64 rows, i64 cols, i64 ld,
              double* acc, bool accumulate, int code, double count, ReduceWorkspace& ws) {
  dispatch_fn(op, [&](auto fn) {
    constexpr Fn F = decltype(fn)::value;
    if (rows == 0) {
      launch_finish<F>(s, acc, 1, !accumulate, code, count);
      return;
    }
    const Layout l = layout(ws, Axis::All, rows, cols);
    dispatch_type(t, [&](auto tag) {
      using T = decltype(tag);
      launch_rows<T, F>(s, static_cast<const T*>(a), rows, cols, ld, l.doubles, 0, 1.0);
    });
    const i64 blocks = groups_of(rows);
    all_blocks_kernel<F><<<static_cast<unsigned>((blocks + 7) / 8), 256, 0, s>>>(
        l.doubles, rows, l.doubles + rows, acc, accumulate, code, count, l.counter);
    CHECK_CUDA_LAUNCH();
  });
}

void cols_impl(cudaStream_t s, Op op, DType t, const void* a, i64 rows, i64 cols, i64 ld,
               double* acc, bool accumulate, int code, double count, ReduceWorkspace& ws) {
  if (cols == 0)
    return;
  dispatch_fn(op, [&](auto fn) {
    constexpr Fn F = decltype(fn)::value;
    const i64 groups = (rows + 63) / 64;
    double* partials = nullptr;
    if (groups > 0) {
      partials = layout(ws, Axis::Cols, rows, cols).doubles;
      dispatch_type(t, [&](auto tag) {
        using T = decltype(tag);
        launch_col_groups<T, F>(s, static_cast<const T*>(a), rows, cols, ld, partials);
      });
    }
    launch_combine<F>(s, partials, groups, cols, acc, accumulate, code, count);
  });
}

Fn fn_of(Op op) {
  return dispatch_fn(op, [](auto fn) { return decltype(fn)::value; });
}

// Several ops along one axis from one pass over the data (see reduce_fused.cuh).
void fused_impl(cudaStream_t s, const std::vector<Op>& ops, Axis axis, DType t, const void* a,
                i64 rows, i64 cols, i64 ld, double* const* out, ReduceWorkspace& ws) {
  unsigned mask = 0;
  for (const Op op : ops)
    mask |= fn_bit(fn_of(op));
  const int slots = std::popcount(mask);
  const auto slot = [&](Op op) { return std::popcount(mask & (fn_bit(fn_of(op)) - 1u)); };
  const i64 groups = groups_of(rows);
  const Layout l = layout(ws, axis, rows, cols, slots);
  if (axis == Axis::Cols) {
    const i64 stride = groups * cols;
    dispatch_type(t, [&](auto tag) {
      using T = decltype(tag);
      constexpr int V = 16 / sizeof(T);
      const bool vec = aligned_to(a, 16) && (rows == 1 || ld % V == 0);
      const unsigned grid = col_group_blocks(rows, cols, vec ? V : 1);
      const T* data = static_cast<const T*>(a);
      if (vec)
        fused_col_groups_kernel<T, true>
            <<<grid, 256, 0, s>>>(data, rows, cols, ld, l.doubles, stride, mask);
      else
        fused_col_groups_kernel<T, false>
            <<<grid, 256, 0, s>>>(data, rows, cols, ld, l.doubles, stride, mask);
      CHECK_CUDA_LAUNCH();
    });
    for (std::size_t k = 0; k < ops.size(); ++k)
      dispatch_fn(ops[k], [&](auto fn) {
        launch_combine<decltype(fn)::value>(s, l.doubles + slot(ops[k]) * stride, groups, cols,
                                            out[k], false, finish_code(ops[k]),
                                            static_cast<double>(rows));
      });
    return;
  }
  dispatch_type(t, [&](auto tag) {
    using T = decltype(tag);
    const T* data = static_cast<const T*>(a);
    if (cols <= kNarrowCols)
      launch_row_kernel(s, fused_row_values_kernel<T, row_unroll<T>(), 8>, rows, warp_rows<8>(),
                        data, rows, cols, ld, l.doubles, rows, mask);
    else
      launch_row_kernel(s, fused_row_values_kernel<T, row_unroll<T>(), 32>, rows, 1, data, rows,
                        cols, ld, l.doubles, rows, mask);
  });
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const double* rowvals = l.doubles + slot(ops[k]) * rows;
    const int code = finish_code(ops[k]);
    if (axis == Axis::Rows) {
      copy_finish_kernel<<<blocks_for(rows, 256), 256, 0, s>>>(rowvals, out[k], rows, code,
                                                               static_cast<double>(cols));
      CHECK_CUDA_LAUNCH();
      continue;
    }
    dispatch_fn(ops[k], [&](auto fn) {
      all_blocks_kernel<decltype(fn)::value>
          <<<static_cast<unsigned>((groups + 7) / 8), 256, 0, s>>>(
              rowvals, rows, l.doubles + slots * rows, out[k], false, code,
              static_cast<double>(rows) * static_cast<double>(cols), l.counter);
      CHECK_CUDA_LAUNCH();
    });
  }
}

} // namespace
} // namespace detail

using detail::i64;

std::size_t ReduceWorkspace::double_capacity() const noexcept {
  const std::size_t fixed = detail::kHeader + detail::counter_bytes(counters_);
  return buf_.bytes() > fixed ? buf_.bytes() - fixed : 0;
}

void ReduceWorkspace::reserve(CUstream_st* stream, Axis axis, std::int64_t rows, std::int64_t cols,
                              int ops) {
  const i64 counters = counters_; // no per-block counters in use: the header holds the one counter
  const std::size_t doubles = std::max(8 * detail::doubles_for(axis, rows, cols, std::max(ops, 1)),
                                       buf_.data() ? double_capacity() : std::size_t{0});
  const std::size_t need = detail::kHeader + detail::counter_bytes(counters) + doubles;
  if (buf_.data() != nullptr && counters == counters_ && need <= buf_.bytes())
    return;
  buf_ = DeviceBuffer(need);
  counters_ = counters;
  // The counters must start at zero (each launch leaves them so).
  CHECK_CUDA(cudaMemsetAsync(buf_.data(), 0, need, stream));
}

void reduce(CUstream_st* stream, Op op, Axis axis, DType t, const void* a, std::int64_t rows,
            std::int64_t cols, std::int64_t ld, double* out, ReduceWorkspace& ws) {
  detail::check_block("reduce", t, a, rows, cols, ld);
  const int code = detail::finish_code(op);
  switch (axis) {
  case Axis::All:
    detail::all_impl(stream, op, t, a, rows, cols, ld, out, false, code,
                     static_cast<double>(rows) * static_cast<double>(cols), ws);
    return;
  case Axis::Cols:
    detail::cols_impl(stream, op, t, a, rows, cols, ld, out, false, code, static_cast<double>(rows),
                      ws);
    return;
  case Axis::Rows:
    break;
  }
  if (rows == 0)
    return;
  detail::dispatch_fn(op, [&](auto fn) {
    constexpr detail::Fn F = decltype(fn)::value;
    detail::dispatch_type(t, [&](auto tag) {
      using T = decltype(tag);
      detail::launch_rows<T, F>(stream, static_cast<const T*>(a), rows, cols, ld, out, code,
                                static_cast<double>(cols));
    });
  });
}

void reduce_fused(CUstream_st* stream, const std::vector<Op>& ops, Axis axis, DType t,
                  const void* a, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                  double* const* out, ReduceWorkspace& ws) {
  detail::check_block("reduce_fused", t, a, rows, cols, ld);
  if (ops.size() <= 1 || rows == 0 || cols == 0) {
    for (std::size_t k = 0; k < ops.size(); ++k)
      reduce(stream, ops[k], axis, t, a, rows, cols, ld, out[k], ws);
    return;
  }
  detail::fused_impl(stream, ops, axis, t, a, rows, cols, ld, out, ws);
}

void reduce_rows(CUstream_st* stream, Op op, DType t, const void* a, std::int64_t rows,
                 std::int64_t cols, std::int64_t ld, double* out) {
  detail::check_block("reduce_rows", t, a, rows, cols, ld);
  if (rows == 0)
    return;
  detail::dispatch_fn(op, [&](auto fn) {
    constexpr detail::Fn F = decltype(fn)::value;
    detail::dispatch_type(t, [&](auto tag) {
      using T = decltype(tag);
      detail::launch_rows<T, F>(stream, static_cast<const T*>(a), rows, cols, ld, out, 0, 1.0);
    });
  });
}

void reduce_col_groups(CUstream_st* stream, Op op, DType t, const void* a, std::int64_t rows,
                       std::int64_t cols, std::int64_t ld, double* out) {
  detail::check_block("reduce_col_groups", t, a, rows, cols, ld);
  if (rows == 0 || cols == 0)
    return;
  detail::dispatch_fn(op, [&](auto fn) {
    constexpr detail::Fn F = decltype(fn)::value;
    detail::dispatch_type(t, [&](auto tag) {
      using T = decltype(tag);
      detail::launch_col_groups<T, F>(stream, static_cast<const T*>(a), rows, cols, ld, out);
    });
  });
}

void fold_rows(CUstream_st* stream, Op op, DType t, const void* a, std::int64_t rows,
               std::int64_t cols, std::int64_t ld, double* acc) {
  detail::check_block("fold_rows", t, a, rows, cols, ld);
  if (rows == 0 || cols == 0)
    return;
  detail::dispatch_fn(op, [&](auto fn) {
    constexpr detail::Fn F = decltype(fn)::value;
    detail::dispatch_type(t, [&](auto tag) {
      using T = decltype(tag);
      detail::fold_rows_kernel<T, F><<<detail::blocks_for(cols, 128), 128, 0, stream>>>(
          static_cast<const T*>(a), rows, cols, ld, acc);
      CHECK_CUDA_LAUNCH();
    });
  });
}

void combine_col_groups(CUstream_st* stream, Op op, const double* groups, std::int64_t ngroups,
                        std::int64_t cols, double* acc) {
  TESSERA_CUDA_REQUIRE(ngroups >= 0 && cols >= 0, "cuda::combine_col_groups: negative size");
  if (cols == 0 || ngroups == 0)
    return;
  detail::dispatch_fn(op, [&](auto fn) {
    detail::launch_combine<decltype(fn)::value>(stream, groups, ngroups, cols, acc, true, 0, 1.0);
  });
}

void reduce_all(CUstream_st* stream, Op op, DType t, const void* a, std::int64_t rows,
                std::int64_t cols, std::int64_t ld, double* acc, ReduceWorkspace& ws) {
  detail::check_block("reduce_all", t, a, rows, cols, ld);
  if (rows == 0)
    return;
  detail::all_impl(stream, op, t, a, rows, cols, ld, acc, true, 0, 1.0, ws);
}

void reduce_cols(CUstream_st* stream, Op op, DType t, const void* a, std::int64_t rows,
                 std::int64_t cols, std::int64_t ld, double* acc, ReduceWorkspace& ws) {
  detail::check_block("reduce_cols", t, a, rows, cols, ld);
  if (rows == 0)
    return;
  detail::cols_impl(stream, op, t, a, rows, cols, ld, acc, true, 0, 1.0, ws);
}

void fill_identity(CUstream_st* stream, Op op, double* v, std::int64_t n) {
  if (n <= 0)
    return;
  detail::dispatch_fn(op, [&](auto fn) {
    detail::fill_identity_kernel<decltype(fn)::value>
        <<<detail::blocks_for(n, 256), 256, 0, stream>>>(v, n);
    CHECK_CUDA_LAUNCH();
  });
}

void finalize(CUstream_st* stream, Op op, double* v, std::int64_t n, double count) {
  const int code = detail::finish_code(op);
  if (n <= 0 || code == 0)
    return;
  detail::dispatch_fn(op, [&](auto fn) {
    detail::launch_finish<decltype(fn)::value>(stream, v, n, false, code, count);
  });
}

} // namespace tessera::cuda
