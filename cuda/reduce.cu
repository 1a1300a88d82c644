// The reduction entry points of cuda/reduce.hpp: the workspace layout and the sequence of
// kernels per axis (single op and fused); dispatch and launch sizes: cuda/reduce_launch.cuh.
#include "cuda/reduce.hpp"
#include "cuda/reduce_cols.cuh"
#include "cuda/reduce_fused.cuh"
#include "cuda/reduce_kernels.cuh"
#include "cuda/reduce_launch.cuh"

#include <bit>

namespace tessera::cuda {

namespace detail {
namespace {

constexpr std::size_t kHeader = 256; // counters at the start of the workspace

struct Layout {
  unsigned* counter;        // super-blocks done (All)
  unsigned* block_counters; // blocks done per super-block (All)
  double* doubles; // row values, block partials, super-blocks (All); group partials, super-blocks
                   // (Cols)
};

std::size_t counter_bytes(i64 counters) {
  return (4 * static_cast<std::size_t>(counters) + 255) / 256 * 256;
}

i64 groups_of(i64 rows) {
  return (std::max<i64>(rows, 0) + 63) / 64;
}

i64 supers_of(i64 groups) {
  return (groups + kSuperBlocks - 1) / kSuperBlocks;
}

// Doubles a reduction of `ops` fused ops (1: a plain one) needs after the counters.
std::size_t doubles_for(Axis axis, i64 rows, i64 cols, int ops = 1) {
  const i64 groups = groups_of(rows), n = std::max<i64>(rows, 0);
  if (axis == Axis::All)
    return static_cast<std::size_t>(ops * n + groups + supers_of(groups));
  if (axis == Axis::Cols)
    return static_cast<std::size_t>((ops * groups + supers_of(groups)) * std::max<i64>(cols, 0));
  return ops > 1 ? static_cast<std::size_t>(ops * n) : 0;
}

Layout layout(ReduceWorkspace& ws, Axis axis, i64 rows, i64 cols, int ops = 1) {
  const bool fits = ws.data() != nullptr &&
                    ws.double_capacity() >= 8 * doubles_for(axis, rows, cols, ops) &&
                    (axis != Axis::All || ws.counter_capacity() >= supers_of(groups_of(rows)));
  TESSERA_CUDA_REQUIRE(fits, "cuda reduction workspace of " + std::to_string(ws.bytes()) +
                                 " bytes is too small for a " + shape_str(rows, cols) +
                                 " reduction (call reserve())");
  auto* base = static_cast<unsigned char*>(ws.data());
  return {reinterpret_cast<unsigned*>(base), reinterpret_cast<unsigned*>(base + kHeader),
          reinterpret_cast<double*>(base + kHeader + counter_bytes(ws.counter_capacity()))};
}

// all_blocks_kernel over `rows` row values at rowvals: *acc = the finished All value; the block
// partials and super-blocks go to `partials` (groups + super-blocks doubles).
template <Fn F>
void launch_all_blocks(cudaStream_t s, const double* rowvals, i64 rows, double* partials,
                       double* acc, int code, double count, const Layout& l) {
  const i64 blocks = groups_of(rows);
  all_blocks_kernel<F><<<static_cast<unsigned>((blocks + 7) / 8), 256, 0, s>>>(
      rowvals, rows, partials, partials + blocks, acc, code, count, l.block_counters, l.counter);
  CHECK_CUDA_LAUNCH();
}

// The All axis, finished.
void all_impl(cudaStream_t s, Op op, DType t, const void* a, i64 rows, i64 cols, i64 ld,
              double* acc, int code, double count, ReduceWorkspace& ws) {
  dispatch_fn(op, [&](auto fn) {
    constexpr Fn F = decltype(fn)::value;
    if (rows == 0) {
      launch_finish<F>(s, acc, 1, true, code, count);
      return;
    }
    const Layout l = layout(ws, Axis::All, rows, cols);
    dispatch_type(t, [&](auto tag) {
      using T = decltype(tag);
      launch_rows<T, F>(s, static_cast<const T*>(a), rows, cols, ld, l.doubles, 0, 1.0);
    });
    launch_all_blocks<F>(s, l.doubles, rows, l.doubles + rows, acc, code, count, l);
  });
}

// The Cols axis, finished.
void cols_impl(cudaStream_t s, Op op, DType t, const void* a, i64 rows, i64 cols, i64 ld,
               double* acc, int code, double count, ReduceWorkspace& ws) {
  if (cols == 0)
    return;
  dispatch_fn(op, [&](auto fn) {
    constexpr Fn F = decltype(fn)::value;
    const i64 groups = groups_of(rows);
    if (groups == 0) {
      launch_finish<F>(s, acc, cols, true, code, count);
      return;
    }
    double* partials = layout(ws, Axis::Cols, rows, cols).doubles;
    dispatch_type(t, [&](auto tag) {
      using T = decltype(tag);
      launch_col_groups<T, F>(s, static_cast<const T*>(a), rows, cols, ld, partials);
    });
    launch_combine_canonical<F>(s, partials, groups, cols, acc, partials + groups * cols, code,
                                count);
  });
}

Fn fn_of(Op op) {
  return dispatch_fn(op, [](auto fn) { return decltype(fn)::value; });
}

unsigned fused_mask(const std::vector<Op>& ops) {
  unsigned mask = 0;
  for (const Op op : ops)
    mask |= fn_bit(fn_of(op));
  return mask;
}

int fused_slot(unsigned mask, Op op) {
  return std::popcount(mask & (fn_bit(fn_of(op)) - 1u));
}

// The row values of every op kind in `mask`, by the row table's choice: slot s at out + s*stride.
void launch_fused_rows(cudaStream_t s, unsigned mask, DType t, const void* a, i64 rows, i64 cols,
                       i64 ld, double* out, i64 stride) {
  dispatch_type(t, [&](auto tag) {
    using T = decltype(tag);
    const T* data = static_cast<const T*>(a);
    const RowsChoice c = launch_staged_or_choose(s, data, rows, cols, ld, out, stride,
                                                 StagedMaskOps{mask, {}}, 0, 1.0);
    if (c.kernel != RowsKernel::Staged)
      launch_row_choice<T, FusedRows<T>>(s, c, rows, cols, data, rows, cols, ld, out, stride, mask);
  });
}

// The column partials of every op kind in `mask`: slot s at out + s*stride.
void launch_fused_col_groups(cudaStream_t s, unsigned mask, DType t, const void* a, i64 rows,
                             i64 cols, i64 ld, double* out, i64 stride) {
  dispatch_type(t, [&](auto tag) {
    using T = decltype(tag);
    launch_col_group_kernel(
        s, [](auto vec) { return fused_col_groups_kernel<T, decltype(vec)::value>; },
        static_cast<const T*>(a), rows, cols, ld, out, stride, mask);
  });
}

// Several ops along one axis from one pass over the data (see reduce_fused.cuh).
void fused_impl(cudaStream_t s, const std::vector<Op>& ops, Axis axis, DType t, const void* a,
                i64 rows, i64 cols, i64 ld, double* const* out, ReduceWorkspace& ws) {
  const unsigned mask = fused_mask(ops);
  const int slots = std::popcount(mask);
  const i64 groups = groups_of(rows);
  const Layout l = layout(ws, axis, rows, cols, slots);
  if (axis == Axis::Cols) {
    const i64 stride = groups * cols;
    launch_fused_col_groups(s, mask, t, a, rows, cols, ld, l.doubles, stride);
    for (std::size_t k = 0; k < ops.size(); ++k)
      dispatch_fn(ops[k], [&](auto fn) {
        launch_combine_canonical<decltype(fn)::value>(
            s, l.doubles + fused_slot(mask, ops[k]) * stride, groups, cols, out[k],
            l.doubles + slots * stride, finish_code(ops[k]), static_cast<double>(rows));
      });
    return;
  }
  launch_fused_rows(s, mask, t, a, rows, cols, ld, l.doubles, rows);
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const double* rowvals = l.doubles + fused_slot(mask, ops[k]) * rows;
    const int code = finish_code(ops[k]);
    if (axis == Axis::Rows) {
      copy_finish_kernel<<<blocks_for(rows, 256), 256, 0, s>>>(rowvals, out[k], rows, code,
                                                               static_cast<double>(cols));
      CHECK_CUDA_LAUNCH();
      continue;
    }
    dispatch_fn(ops[k], [&](auto fn) {
      launch_all_blocks<decltype(fn)::value>(
          s, rowvals, rows, l.doubles + slots * rows, out[k], code,
          static_cast<double>(rows) * static_cast<double>(cols), l);
    });
  }
}

// reduce_rows_fused / reduce_col_groups_fused: checks, then `launch`.
template <class Launch>
void fused_pieces(const char* what, const std::vector<Op>& ops, DType t, const void* a, i64 rows,
                  i64 cols, i64 ld, double* out, i64 stride, i64 slot_size, Launch&& launch) {
  check_block(what, t, a, rows, cols, ld);
  TESSERA_CUDA_REQUIRE(rows > 0 && cols > 0 && !ops.empty() && out != nullptr,
                       std::string("cuda::") + what + ": needs rows, columns and ops");
  TESSERA_CUDA_REQUIRE(stride >= slot_size, std::string("cuda::") + what + ": slot stride " +
                                                std::to_string(stride) + " below " +
                                                std::to_string(slot_size));
  launch(fused_mask(ops));
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
  // A counter per super-block for the All axis (the header holds the one counter of all).
  const i64 counters =
      std::max<i64>(counters_, axis == Axis::All ? detail::supers_of(detail::groups_of(rows)) : 0);
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
    detail::all_impl(stream, op, t, a, rows, cols, ld, out, code,
                     static_cast<double>(rows) * static_cast<double>(cols), ws);
    return;
  case Axis::Cols:
    detail::cols_impl(stream, op, t, a, rows, cols, ld, out, code, static_cast<double>(rows), ws);
    return;
  case Axis::Rows:
    break;
  }
  if (rows == 0)
    return;
  detail::dispatch_block(
      op, t, a, [&]<detail::Fn F, class T>(std::integral_constant<detail::Fn, F>, const T* data) {
        detail::launch_rows<T, F>(stream, data, rows, cols, ld, out, code,
                                  static_cast<double>(cols));
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

int reduce_fused_slots(const std::vector<Op>& ops) {
  return std::popcount(detail::fused_mask(ops));
}

int reduce_fused_slot(const std::vector<Op>& ops, Op op) {
  return detail::fused_slot(detail::fused_mask(ops), op);
}

void reduce_rows_fused(CUstream_st* stream, const std::vector<Op>& ops, DType t, const void* a,
                       std::int64_t rows, std::int64_t cols, std::int64_t ld, double* out,
                       std::int64_t stride) {
  detail::fused_pieces("reduce_rows_fused", ops, t, a, rows, cols, ld, out, stride, rows,
                       [&](unsigned mask) {
                         detail::launch_fused_rows(stream, mask, t, a, rows, cols, ld, out, stride);
                       });
}

void reduce_col_groups_fused(CUstream_st* stream, const std::vector<Op>& ops, DType t,
                             const void* a, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                             double* out, std::int64_t stride) {
  detail::fused_pieces("reduce_col_groups_fused", ops, t, a, rows, cols, ld, out, stride,
                       detail::groups_of(rows) * cols, [&](unsigned mask) {
                         detail::launch_fused_col_groups(stream, mask, t, a, rows, cols, ld, out,
                                                         stride);
                       });
}

void reduce_rows(CUstream_st* stream, Op op, DType t, const void* a, std::int64_t rows,
                 std::int64_t cols, std::int64_t ld, double* out) {
  detail::block_entry(
      "reduce_rows", op, t, a, rows, cols, ld, rows == 0,
      [&]<detail::Fn F, class T>(std::integral_constant<detail::Fn, F>, const T* data) {
        detail::launch_rows<T, F>(stream, data, rows, cols, ld, out, 0, 1.0);
      });
}

void reduce_col_groups(CUstream_st* stream, Op op, DType t, const void* a, std::int64_t rows,
                       std::int64_t cols, std::int64_t ld, double* out) {
  detail::block_entry(
      "reduce_col_groups", op, t, a, rows, cols, ld, rows == 0 || cols == 0,
      [&]<detail::Fn F, class T>(std::integral_constant<detail::Fn, F>, const T* data) {
        detail::launch_col_groups<T, F>(stream, data, rows, cols, ld, out);
      });
}

void fold_rows(CUstream_st* stream, Op op, DType t, const void* a, std::int64_t rows,
               std::int64_t cols, std::int64_t ld, double* acc) {
  detail::block_entry(
      "fold_rows", op, t, a, rows, cols, ld, rows == 0 || cols == 0,
      [&]<detail::Fn F, class T>(std::integral_constant<detail::Fn, F>, const T* data) {
        detail::fold_rows_kernel<T, F>
            <<<detail::blocks_for(cols, 128), 128, 0, stream>>>(data, rows, cols, ld, acc);
        CHECK_CUDA_LAUNCH();
      });
}

void fold_col_groups(CUstream_st* stream, Op op, const double* groups, std::int64_t ngroups,
                     std::int64_t first, std::int64_t cols, double* total, double* open,
                     double* scratch) {
  TESSERA_CUDA_REQUIRE(ngroups >= 0 && cols >= 0 && first >= 0,
                       "cuda::fold_col_groups: negative size or first block");
  if (cols == 0 || ngroups == 0)
    return;
  const i64 G = detail::kSuperBlocks, at = first % G;
  detail::dispatch_fn(op, [&](auto fn) {
    constexpr detail::Fn F = decltype(fn)::value;
    // The head: groups that continue the open super-block (whatever it holds, as the CPU's
    // fold does), closing it if they reach its end.
    const i64 head = std::min<i64>(ngroups, G - at);
    if (head > 0) {
      detail::launch_combine<F>(stream, groups, head, cols, open, true, 0, 1.0);
      if (at + head == G) {
        detail::launch_combine<F>(stream, open, 1, cols, total, true, 0, 1.0);
        fill_identity(stream, op, open, cols);
      }
    }
    // Whole super-blocks, each folded on its own, then into total in order; the rest opens
    // the next one (open holds the identity here).
    const i64 whole = (ngroups - head) / G, tail = (ngroups - head) % G;
    if (whole > 0) {
      detail::launch_combine<F>(stream, groups + head * cols, whole * G, cols, scratch, false, 0,
                                1.0, G);
      detail::launch_combine<F>(stream, scratch, whole, cols, total, true, 0, 1.0);
    }
    if (tail > 0)
      detail::launch_combine<F>(stream, groups + (head + whole * G) * cols, tail, cols, open, true,
                                0, 1.0);
  });
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
