// Op and type dispatch, argument checks and launch sizes of the reduction kernels, and one
// launcher per kernel (row values, column-group partials, combine, finish). Included by
// cuda/reduce.cu only.
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "core/settings.hpp"
#include "cuda/reduce_cols.cuh"
#include "cuda/reduce_fused.cuh"
#include "cuda/reduce_kernels.cuh"
#include "cuda/reduce_rows_staged.cuh"

namespace tessera::cuda::detail {

template <class G>
decltype(auto) dispatch_fn(Op op, G&& g) {
  switch (op) {
  case Op::Sum:
  case Op::Mean:
  case Op::Count: // a Sum of the ones and zeros the masking engine gives it
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

// g(fn, tag): both dispatches at once, for a kernel templated on the op and the data type.
template <class G>
void dispatch_fn_type(Op op, DType t, G&& g) {
  dispatch_fn(op, [&](auto fn) { dispatch_type(t, [&](auto tag) { g(fn, tag); }); });
}

inline int finish_code(Op op) {
  return op == Op::Mean ? 1 : op == Op::Norm2 ? 2 : 0;
}

inline void check_block(const char* what, DType t, const void* a, i64 rows, i64 cols, i64 ld) {
  const std::string w = std::string("cuda::") + what + " of a " + shape_str(rows, cols) + " " +
                        std::string(dtype_name(t)) + " block: ";
  TESSERA_CUDA_REQUIRE(rows >= 0 && cols >= 0, w + "negative shape");
  TESSERA_CUDA_REQUIRE(rows == 0 || cols == 0 || ld >= cols,
                       w + "ld " + std::to_string(ld) + " < cols");
  TESSERA_CUDA_REQUIRE(rows == 0 || cols == 0 || a != nullptr, w + "null data pointer");
  TESSERA_CUDA_REQUIRE(aligned_to(a, dtype_size(t)), w + "data pointer not aligned to its type");
}

// g(integral_constant<Fn, F>, const T* data): the op and type dispatch of a block entry point.
template <class G>
void dispatch_block(Op op, DType t, const void* a, G&& g) {
  dispatch_fn_type(op, t, [&](auto fn, auto tag) {
    using T = decltype(tag);
    g(fn, static_cast<const T*>(a));
  });
}

// An entry point on one block: its argument checks, nothing to do when `empty`, else
// dispatch_block(g).
template <class G>
void block_entry(const char* what, Op op, DType t, const void* a, i64 rows, i64 cols, i64 ld,
                 bool empty, G&& g) {
  check_block(what, t, a, rows, cols, ld);
  if (!empty)
    dispatch_block(op, t, a, g);
}

// Blocks that fill the device once for a grid-striding kernel.
template <class K>
unsigned resident_blocks(K kernel, int threads) {
  int per_sm = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  return static_cast<unsigned>(std::max(1, per_sm) * sm_count());
}

inline unsigned blocks_for(i64 n, int threads, i64 cap = 1 << 20) {
  return static_cast<unsigned>(std::max<i64>(1, std::min<i64>((n + threads - 1) / threads, cap)));
}

// 128-lane chunks in flight per warp: 64 (f32) or 128 (f64) bytes per thread.
template <class T>
constexpr int row_unroll() {
  return 4;
}

// The same for the several-op row kernels: f32 with 128 bytes per thread, which kept three ops
// nearer the memory's speed than 64; f64 stays at 128 (256 was slower).
template <class T>
constexpr int fused_row_unroll() {
  return sizeof(T) == 4 ? 8 : 4;
}

// Threads per row: rows of at most 128 columns go the fewest threads to a row whose four lanes
// each cover the row (1 for at most 4 columns, 2, 4, 8, 32 for at most 128), 32 / TPR rows side
// by side and four such groups at once, their loads in flight together; longer rows go a warp
// to a row, walked in steps. A warp walking narrow rows one at a time leaves the memory idle
// between rows.
constexpr int kNarrowCols = 128;

// g(integral_constant<int, TPR>) with the threads per row of a narrow row (cols <= 128).
template <class G>
void with_narrow_tpr(i64 cols, G&& g) {
  if (cols <= 4)
    g(std::integral_constant<int, 1>{});
  else if (cols <= 8)
    g(std::integral_constant<int, 2>{});
  else if (cols <= 16)
    g(std::integral_constant<int, 4>{});
  else if (cols <= 32)
    g(std::integral_constant<int, 8>{});
  else
    g(std::integral_constant<int, 32>{});
}

// Launches a row kernel (row_values_kernel or fused_row_values_kernel, the TPR argument last)
// with as many blocks as the device holds at once, or fewer for few rows.
// resident_blocks(kernel, threads), asked of the driver once per kernel (a static in a template
// on the kernel's type alone would be shared by every kernel of the same signature, and would
// size all their grids by the first one launched).
template <class K>
unsigned resident_blocks_cached(K kernel, int threads) {
  static std::mutex mutex;
  static std::map<const void*, unsigned> cache;
  const std::lock_guard lock(mutex);
  const auto [it, fresh] = cache.try_emplace(reinterpret_cast<const void*>(kernel), 0u);
  if (fresh)
    it->second = resident_blocks(kernel, threads);
  return it->second;
}

template <class K>
void launch_row_kernel(cudaStream_t s, K kernel, i64 rows, int rows_per_warp, auto... args) {
  const unsigned resident = resident_blocks_cached(kernel, 256);
  const i64 warps = (rows + rows_per_warp - 1) / rows_per_warp;
  const unsigned grid = std::min<unsigned>(resident, static_cast<unsigned>((warps + 7) / 8));
  kernel<<<grid, 256, 0, s>>>(args...);
  CHECK_CUDA_LAUNCH();
}

// ---- The row values' choice table (along rows, and over all, which folds them) ----
//
// Rows take, in this order of precedence:
//   staged   at most 512 rows of at least 4096 columns, on Hopper and later: a row's four lane
//            groups streamed by a cluster of four blocks (reduce_rows_staged.cuh); with more
//            rows a warp per row already fills the device
//   strided  113 to 256 columns of f32, 49 to 160 of f64: the lanes laid out across the warp
//            (strided_rows), one or two chunks of 128 columns, rows batched per warp
//   tree     (one op) 33 to 112 columns of f32, 33 to 48 of f64: a thread to a row, which adds
//            the row from shared memory in the shape of the canonical tree (row_tree_kernel)
//   narrow   at most 128 columns: 1, 2, 4, 8 or 32 threads to a row, rows side by side
//   short    at most 509 (f32) or 511 (f64) columns: four or two rows a warp (short_rows)
//   warp     every other row: a warp walks the row
// Where each wins, and by how much, is in docs/performance.md ("Reductions").
// TESSERA_KERNEL=cuda-reduce-rows:NAME forces one of them wherever it can take the rows (for
// measurements; each gives the same bits), the rule elsewhere.
enum class RowsKernel { Warp, Staged, Short, Strided, Tree, Narrow }; // core/settings.cpp's order

struct RowsChoice {
  RowsKernel kernel;
  int n = 0; // strided: chunks of 128 columns (1, 2); short: 128-column steps a row (2, 4)
};

constexpr i64 kStagedMaxRows = 512;
constexpr i64 kStagedMinCols = 4096;

// The kernel TESSERA_KERNEL forces, read once; -1 for none.
inline int rows_kernel_forced() {
  static const int forced = settings::kernel(settings::KernelOp::CudaReduceRows).value_or(-1);
  return forced;
}

// Whether kernel k takes rows of `cols` columns (`fused`: of several ops at once).
template <class T>
bool rows_kernel_takes(RowsKernel k, i64 cols, bool fused) {
  switch (k) {
  case RowsKernel::Staged:
    return cols > kNarrowCols;
  case RowsKernel::Short:
    return cols <= short_row_max_cols<T, 4>();
  case RowsKernel::Strided:
    return cols <= 256;
  case RowsKernel::Tree:
    return !fused && cols <= kTreeMaxCols;
  case RowsKernel::Narrow:
    return cols <= kNarrowCols;
  case RowsKernel::Warp:
    break;
  }
  return true;
}

// The rule (`staged`: whether the staged kernel may be chosen).
template <class T>
RowsKernel rows_rule(i64 rows, i64 cols, bool fused, bool staged) {
  constexpr bool f32 = sizeof(T) == 4;
  if (staged && rows <= kStagedMaxRows && cols >= kStagedMinCols)
    return RowsKernel::Staged;
  if (cols > (f32 ? 112 : 48) && cols <= (f32 ? 256 : 160))
    return RowsKernel::Strided;
  if (!fused && cols > 32 && cols <= (f32 ? kTreeMaxCols : kTreeMaxCols / 2))
    return RowsKernel::Tree;
  if (cols <= kNarrowCols)
    return RowsKernel::Narrow;
  if (cols <= short_row_max_cols<T, 4>())
    return RowsKernel::Short;
  return RowsKernel::Warp;
}

// The table's choice for rows × cols (cols > 0); `staged` false once the device has refused the
// staged kernel.
template <class T>
RowsChoice choose_rows(i64 rows, i64 cols, bool fused, bool staged = true) {
  const int forced = rows_kernel_forced();
  RowsKernel k = rows_rule<T>(rows, cols, fused, staged);
  if (forced >= 0 && rows_kernel_takes<T>(static_cast<RowsKernel>(forced), cols, fused) &&
      (staged || forced != static_cast<int>(RowsKernel::Staged)))
    k = static_cast<RowsKernel>(forced);
  RowsChoice c{k};
  if (k == RowsKernel::Strided)
    c.n = cols <= 128 ? 1 : 2;
  else if (k == RowsKernel::Short)
    c.n = cols <= short_row_max_cols<T, 2>() ? 2 : 4;
  return c;
}

// Whether `kernel` (an instance of staged_row_values_kernel) can run on the current device:
// compute capability 9.0 or later (clusters, distributed shared memory), code compiled for it,
// and its ring of shared memory granted. Cached per device.
template <auto kernel>
bool staged_rows_ready(std::size_t ring_bytes) {
  static signed char cache[64] = {}; // 0 unknown, 1 yes, -1 no
  int dev = 0;
  CHECK_CUDA(cudaGetDevice(&dev));
  if (dev < 64 && cache[dev] != 0)
    return cache[dev] > 0;
  int major = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  cudaFuncAttributes attr{};
  bool ok = major >= 9 && cudaFuncGetAttributes(&attr, kernel) == cudaSuccess &&
            attr.binaryVersion >= 90 &&
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(ring_bytes)) == cudaSuccess;
  (void)cudaGetLastError(); // a refusal above is an answer, not an error of a later launch
  if (dev < 64)
    cache[dev] = ok ? 1 : -1;
  return ok;
}

// Row values by the staged kernel where the device takes it: out[slot * stride + i] for every op
// of `ops`. False (nothing queued) otherwise.
template <class T, class Ops>
bool try_launch_staged_rows(cudaStream_t s, const T* a, i64 rows, i64 cols, i64 ld, double* out,
                            i64 stride, Ops ops, int code, double count) {
  if (rows == 0)
    return false;
  constexpr auto kernel = staged_row_values_kernel<T, Ops>;
  if (!staged_rows_ready<kernel>(staged_ring_bytes<T>()))
    return false;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(rows * kStagedGroups));
  cfg.blockDim = dim3(kStagedThreads);
  cfg.dynamicSmemBytes = staged_ring_bytes<T>();
  cfg.stream = s;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = kStagedGroups;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  cfg.attrs = &cluster;
  cfg.numAttrs = 1;
  CHECK_CUDA(cudaLaunchKernelEx(&cfg, kernel, a, rows, cols, ld, out, stride, ops, code, count));
  return true;
}

// The table's choice, the staged kernel launched where it is the one (with `ops`: StagedOneOp or
// StagedMaskOps); where the device refuses it, the rule without it.
template <class T, class Ops>
RowsChoice launch_staged_or_choose(cudaStream_t s, const T* a, i64 rows, i64 cols, i64 ld,
                                   double* out, i64 stride, Ops ops, int code, double count) {
  constexpr bool fused = std::is_same_v<Ops, StagedMaskOps>;
  const RowsChoice c = choose_rows<T>(rows, cols, fused);
  if (c.kernel != RowsKernel::Staged ||
      try_launch_staged_rows(s, a, rows, cols, ld, out, stride, ops, code, count))
    return c;
  return choose_rows<T>(rows, cols, fused, false);
}

// Launches the choice c (strided, narrow, short or warp) with the kernels of K (OneOpRows or
// FusedRows below), whose arguments are `args`.
template <class T, class K>
void launch_row_choice(cudaStream_t s, RowsChoice c, i64 rows, i64 cols, auto... args) {
  switch (c.kernel) {
  case RowsKernel::Strided: {
    const auto launch = [&](auto chunks) {
      constexpr int C = decltype(chunks)::value;
      constexpr int R = strided_batch_rows<T, C>();
      launch_row_kernel(s, K::template strided<C, R>(), rows, R, args...);
    };
    if (c.n == 1)
      launch(std::integral_constant<int, 1>{});
    else
      launch(std::integral_constant<int, 2>{});
    return;
  }
  case RowsKernel::Narrow:
    with_narrow_tpr(cols, [&](auto tpr) {
      constexpr int TPR = decltype(tpr)::value;
      launch_row_kernel(s, K::template narrow<TPR>(), rows, warp_rows<TPR>(), args...);
    });
    return;
  case RowsKernel::Short:
    if (c.n == 2)
      launch_row_kernel(s, K::template short_rows<2, 4>(), rows, 4, args...);
    else
      launch_row_kernel(s, K::template short_rows<4, 2>(), rows, 2, args...);
    return;
  default:
    launch_row_kernel(s, K::whole_rows(), rows, 1, args...);
  }
}

// The row kernels of one op F (finishing by their finish code), and of several ops (fused).
template <class T, Fn F>
struct OneOpRows {
  template <int C, int R>
  static auto strided() {
    return batched_row_values_kernel<T, F, StridedWalk<C>, R>;
  }
  template <int TPR>
  static auto narrow() {
    return row_values_kernel<T, F, row_unroll<T>(), TPR>;
  }
  template <int U, int R>
  static auto short_rows() {
    return batched_row_values_kernel<T, F, ShortWalk<U>, R>;
  }
  static auto whole_rows() { return row_values_kernel<T, F, row_unroll<T>(), kWholeRow>; }
};
template <class T>
struct FusedRows {
  template <int C, int R>
  static auto strided() {
    return fused_batched_row_values_kernel<T, StridedWalk<C>, R>;
  }
  template <int TPR>
  static auto narrow() {
    return fused_row_values_kernel<T, fused_row_unroll<T>(), TPR>;
  }
  template <int U, int R>
  static auto short_rows() {
    return fused_batched_row_values_kernel<T, ShortWalk<U>, R>;
  }
  static auto whole_rows() { return fused_row_values_kernel<T, fused_row_unroll<T>(), kWholeRow>; }
};

// The tree kernel (row_tree_kernel): blocks of tree_warps<T>() warps, each copying 32 rows.
template <class T, Fn F>
void launch_row_tree(cudaStream_t s, const T* a, i64 rows, i64 cols, i64 ld, double* rowvals,
                     int code, double count) {
  constexpr auto kernel = row_tree_kernel<T, F>;
  constexpr int threads = 32 * tree_warps<T>();
  const auto smem = static_cast<std::size_t>(threads * (cols | 1)) * sizeof(T);
  int per_sm = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  const i64 blocks = (rows + threads - 1) / threads;
  const auto grid = static_cast<unsigned>(
      std::min<i64>(blocks, static_cast<i64>(std::max(1, per_sm)) * sm_count()));
  kernel<<<grid, threads, smem, s>>>(a, rows, cols, ld, rowvals, code, count);
  CHECK_CUDA_LAUNCH();
}

// Row values of one op, by the table's choice.
template <class T, Fn F>
void launch_rows(cudaStream_t s, const T* a, i64 rows, i64 cols, i64 ld, double* rowvals, int code,
                 double count) {
  const RowsChoice c =
      launch_staged_or_choose(s, a, rows, cols, ld, rowvals, 0, StagedOneOp<F>{}, code, count);
  if (c.kernel == RowsKernel::Staged)
    return;
  if (c.kernel == RowsKernel::Tree)
    return launch_row_tree<T, F>(s, a, rows, cols, ld, rowvals, code, count);
  launch_row_choice<T, OneOpRows<T, F>>(s, c, rows, cols, a, rows, cols, ld, rowvals, code, count);
}

// Threads of the column partials: one per (64-row group, vector of v columns).
inline i64 col_group_items(i64 rows, i64 cols, int v) {
  return ((rows + 63) / 64) * ((cols + v - 1) / v);
}

// Blocks for the column partials.
inline unsigned col_group_blocks(i64 rows, i64 cols, int v) {
  return static_cast<unsigned>(
      std::min<i64>((col_group_items(rows, cols, v) + 255) / 256, 1LL << 30));
}

// Launches the column-group kernel pick(kVec) (col_groups_kernel or fused_col_groups_kernel,
// the arguments after ld in args): its kVec instance where every row starts on 16 bytes.
template <class T, class Pick>
void launch_col_group_kernel(cudaStream_t s, Pick pick, const T* a, i64 rows, i64 cols, i64 ld,
                             auto... args) {
  if (rows_aligned(a, rows, ld)) {
    const auto kernel = pick(std::true_type{});
    kernel<<<col_group_blocks(rows, cols, group_cols<T, true>()), 256, 0, s>>>(a, rows, cols, ld,
                                                                               args...);
  } else {
    const auto kernel = pick(std::false_type{});
    kernel<<<col_group_blocks(rows, cols, 1), 256, 0, s>>>(a, rows, cols, ld, args...);
  }
  CHECK_CUDA_LAUNCH();
}

// Whether a column-group launch of `items` threads fits in one wave of the kernel with more
// rows in flight (col_groups_kernel<T, F, kVec, true>, which holds fewer threads per SM).
template <class T, Fn F, bool kVec>
bool few_col_group_items(i64 items) {
  static const unsigned resident = resident_blocks(col_groups_kernel<T, F, kVec, true>, 256);
  return items <= 256 * static_cast<i64>(resident);
}

template <class T, Fn F>
void launch_col_groups(cudaStream_t s, const T* a, i64 rows, i64 cols, i64 ld, double* out) {
  launch_col_group_kernel(
      s,
      [&](auto vec) {
        constexpr bool kVec = decltype(vec)::value;
        const i64 items = col_group_items(rows, cols, group_cols<T, kVec>());
        return few_col_group_items<T, F, kVec>(items) ? col_groups_kernel<T, F, kVec, true>
                                                      : col_groups_kernel<T, F, kVec, false>;
      },
      a, rows, cols, ld, out);
}

// acc + y·cols = fold of groups [y·run, (y+1)·run), for every batch y (one batch by default).
template <Fn F>
void launch_combine(cudaStream_t s, const double* groups, i64 ngroups, i64 cols, double* acc,
                    bool accumulate, int code, double count, i64 run = 0) {
  if (run <= 0 || run >= ngroups)
    run = ngroups;
  const i64 batches = (ngroups + run - 1) / run;
  // Few columns of many groups (more than a super-block's: the fold of the super-blocks of a
  // matrix of over 4 million rows): a thread per column would leave the device nearly idle
  // while it waits for each batch of its sequential fold, so a warp takes each column.
  if (batches == 1 && ngroups > kSuperBlocks && cols < 16384)
    combine_groups_warp_kernel<F>
        <<<blocks_for(cols, 1), 32, 0, s>>>(groups, ngroups, cols, acc, accumulate, code, count);
  else
    combine_groups_kernel<F>
        <<<dim3(blocks_for(cols, 128), static_cast<unsigned>(std::min<i64>(batches, 65535))), 128,
           0, s>>>(groups, ngroups, cols, acc, accumulate, code, count, run);
  CHECK_CUDA_LAUNCH();
}

// The canonical order's fold of column partials whose first group is global block 0:
// acc[j] = finish(fold over super-blocks of their groups' fold). `supers`: room for the
// super-blocks' values, cols each (unused when there is one super-block).
template <Fn F>
void launch_combine_canonical(cudaStream_t s, const double* groups, i64 ngroups, i64 cols,
                              double* acc, double* supers, int code, double count) {
  const i64 nsuper = (ngroups + kSuperBlocks - 1) / kSuperBlocks;
  if (nsuper <= 1) { // identity ⊕ q is q (core/reduction.hpp)
    launch_combine<F>(s, groups, ngroups, cols, acc, false, code, count);
    return;
  }
  launch_combine<F>(s, groups, ngroups, cols, supers, false, 0, 1.0, kSuperBlocks);
  launch_combine<F>(s, supers, nsuper, cols, acc, false, code, count);
}

template <Fn F>
void launch_finish(cudaStream_t s, double* v, i64 n, bool from_identity, int code, double count) {
  if (n == 0)
    return;
  finish_kernel<F><<<blocks_for(n, 256), 256, 0, s>>>(v, n, from_identity, code, count);
  CHECK_CUDA_LAUNCH();
}

} // namespace tessera::cuda::detail
