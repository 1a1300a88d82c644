// The public reductions of cpu/reduce.hpp: the kernels compiled with the build's own flags
// (cpu/reduce_kernels.inl), and the choice, once, of the instruction set they run with.
#include "cpu/reduce.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/log.hpp"
#include "core/settings.hpp"
#include "cpu/reduce_kernels.hpp"
#include "cpu/require_shape.hpp"

#define TESSERA_REDUCE_KERNELS kReducePortable
#include "cpu/reduce_kernels.inl"

namespace tessera::cpu {

namespace detail {

extern const ReduceKernels kReduceAvx2;
extern const ReduceKernels kReduceAvx512;

const ReduceKernels& reduce_kernels(Isa isa) noexcept {
  switch (isa) {
  case Isa::Avx512:
    return kReduceAvx512;
  case Isa::Avx2:
    return kReduceAvx2;
  case Isa::Portable:
    break;
  }
  return kReducePortable;
}

} // namespace detail

namespace {

const detail::ReduceKernels& kernels() noexcept {
  return detail::reduce_kernels(detail::configured_isa());
}

} // namespace

template <class T>
void reduce_rows(Op op, const T* a, std::int64_t rows, std::int64_t cols, double* out) {
  detail::require_shape("reduce_rows", rows, cols);
  kernels().of<T>().reduce_rows(op, a, rows, cols, out);
}

template <class T>
void reduce_rows_multi(const Op* ops, std::size_t nops, const T* a, std::int64_t rows,
                       std::int64_t cols, double* const* out) {
  detail::require_shape("reduce_rows_multi", rows, cols);
  kernels().of<T>().reduce_rows_multi(ops, nops, a, rows, cols, out);
}

template <class T>
void reduce_col_groups(Op op, const T* a, std::int64_t rows, std::int64_t cols, double* out) {
  detail::require_shape("reduce_col_groups", rows, cols);
  kernels().of<T>().reduce_col_groups(op, a, rows, cols, out);
}

template <class T>
void reduce_col_groups_multi(const Op* ops, std::size_t nops, const T* a, std::int64_t rows,
                             std::int64_t cols, double* const* out) {
  detail::require_shape("reduce_col_groups_multi", rows, cols);
  kernels().of<T>().reduce_col_groups_multi(ops, nops, a, rows, cols, out);
}

void fold_partials(Op op, double* total, double* open, std::int64_t first, const double* partials,
                   std::int64_t groups, std::int64_t cols) {
  TESSERA_REQUIRE(first >= 0 && groups >= 0 && cols >= 0, InputError,
                  "fold_partials: {} groups of {} columns from block {}", groups, cols, first);
  // Runs of blocks that lie in one super-block; the kernel folds a run into `open` in order.
  for (std::int64_t g = 0; g < groups;) {
    const std::int64_t at = (first + g) % kReduceSuperBlocks;
    const std::int64_t run = std::min(groups - g, kReduceSuperBlocks - at);
    kernels().fold_partials(op, open, partials + g * cols, run, cols);
    g += run;
    if (at + run == kReduceSuperBlocks) {
      close_partials(op, total, open, cols);
      std::fill_n(open, cols, identity(op));
    }
  }
}

void fold_row_blocks(Op op, const double* r, std::int64_t rows, double* p) {
  TESSERA_REQUIRE(rows >= 0, InputError, "fold_row_blocks: {} rows", rows);
  kernels().fold_row_blocks(op, r, rows, p);
}

void close_partials(Op op, double* total, const double* open, std::int64_t cols) {
  kernels().fold_partials(op, total, open, 1, cols);
}

template <class T>
void fold_rows(Op op, const T* a, std::int64_t rows, std::int64_t cols, double* acc) {
  detail::require_shape("fold_rows", rows, cols);
  kernels().of<T>().fold_rows(op, a, rows, cols, acc);
}

template void reduce_rows(Op, const float*, std::int64_t, std::int64_t, double*);
template void reduce_rows(Op, const double*, std::int64_t, std::int64_t, double*);
template void reduce_rows_multi(const Op*, std::size_t, const float*, std::int64_t, std::int64_t,
                                double* const*);
template void reduce_rows_multi(const Op*, std::size_t, const double*, std::int64_t, std::int64_t,
                                double* const*);
template void reduce_col_groups(Op, const float*, std::int64_t, std::int64_t, double*);
template void reduce_col_groups(Op, const double*, std::int64_t, std::int64_t, double*);
template void reduce_col_groups_multi(const Op*, std::size_t, const float*, std::int64_t,
                                      std::int64_t, double* const*);
template void reduce_col_groups_multi(const Op*, std::size_t, const double*, std::int64_t,
                                      std::int64_t, double* const*);
template void fold_rows(Op, const float*, std::int64_t, std::int64_t, double*);
template void fold_rows(Op, const double*, std::int64_t, std::int64_t, double*);

} // namespace tessera::cpu
