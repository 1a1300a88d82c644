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

// The same for the several-op row kernel: f32 with 128 bytes per thread (0.92 of cub on an
// H200 with three ops, 0.86 with 64 bytes); f64 stays at 128 (256 measured slower: 0.93 vs 0.96).
template <class T>
constexpr int fused_row_unroll() {
  return sizeof(T) == 4 ? 8 : 4;
}

// Threads per row: rows of at most 128 columns go the fewest threads to a row whose four lanes
// each cover the row (1 for at most 4 columns, 2, 4, 8, 32 for at most 128), 32 / TPR rows side
// by side and four such groups at once, their loads in flight together; longer rows go a warp
// to a row, walked in steps. A warp walking rows of 40 columns one at a time ran 1000003 × 40
// at 0.07 of cub's Sum (f32), and eight threads to rows of three columns 9000001 × 3 at 0.11:
// the memory sat idle between rows.
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

// The staged row kernel (reduce_rows_staged.cuh) for matrices of at most this many rows of at
// least this many columns: with more rows, a warp per row already fills the device.
constexpr i64 kStagedMaxRows = 512;
constexpr i64 kStagedMinCols = 4096;

// TESSERA_KERNEL=cuda-reduce-rows:warp|staged|short|strided forces one row kernel (for
// measurements); unset: the choice by shape. 0: by shape,
// 1: warp, 2: staged, 3: short (short_rows for rows of 129 to 511 columns, strided_rows for
// none), 4: strided (strided_rows for every row of at most 256 columns).
enum RowsKernel { kRowsByShape, kRowsWarp, kRowsStaged, kRowsShort, kRowsStrided };
inline int rows_kernel_forced() {
  static const int forced = 1 + settings::kernel(settings::KernelOp::CudaReduceRows).value_or(-1);
  return forced;
}

inline bool staged_rows_wanted(i64 rows, i64 cols) {
  const int forced = rows_kernel_forced();
  if (forced != 0)
    return forced == 2 && cols > kNarrowCols;
  return rows <= kStagedMaxRows && cols >= kStagedMinCols;
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

// Row values by the staged kernel when the shape asks for it and the device takes it: out[slot *
// stride + i] for every op of `ops`. False (nothing queued) otherwise.
template <class T, class Ops>
bool try_launch_staged_rows(cudaStream_t s, const T* a, i64 rows, i64 cols, i64 ld, double* out,
                            i64 stride, Ops ops, int code, double count) {
  if (rows == 0 || !staged_rows_wanted(rows, cols))
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

// Rows where the strided row kernel (strided_rows, C = 1 or 2 chunks of 128 columns) is the
// choice. Measured on an H100 along rows, fraction of cub's Sum (strided / the kernel it
// replaced), `tessera bench reduce --backend cuda` over 1000003 rows in one process:
//   f32: 128 columns 1.02 / 0.74 (tree), 129 0.70 / 0.45 (short), 150 0.80 / 0.53,
//        200 0.97 / 0.75, 256 0.98 / 0.71; at 100 the tree 0.78 and at 300, 400 short
//        0.80, 0.97 stay (strided with 256 bytes a thread: 0.75, 0.76, 0.91).
//   f64: 64 1.06 / 0.87 (tree), 100 1.01 / 0.84 (32 threads a row), 128 1.02 / 0.92,
//        129 0.94 / 0.70 (short), 150 0.96 / 0.82; at 40 the tree (0.89) and from 200 on
//        short (0.99–1.00) stay.
// cuda-reduce-rows:strided sends every row of at most 256 columns there, :warp and
// :short none. Returns C, or 0 where another kernel takes the rows.
template <class T>
int strided_chunks(i64 cols) {
  const int forced = rows_kernel_forced();
  if (forced == kRowsWarp || forced == kRowsShort || cols == 0 || cols > 256)
    return 0;
  const i64 lo = forced == kRowsStrided ? 0 : sizeof(T) == 4 ? 112 : 48;
  const i64 hi = forced == kRowsStrided ? 256 : sizeof(T) == 4 ? 256 : 160;
  if (cols <= lo || cols > hi)
    return 0;
  return cols <= 128 ? 1 : 2;
}

// The strided row kernel `pick(C, R)` for rows of at most 128·C columns, R rows a warp at once.
template <class T, class Pick>
bool try_launch_strided_rows(cudaStream_t s, i64 rows, i64 cols, Pick pick, auto... args) {
  const int c = strided_chunks<T>(cols);
  if (c == 0)
    return false;
  const auto launch = [&](auto chunks) {
    constexpr int C = decltype(chunks)::value;
    constexpr int R = strided_batch_rows<T, C>();
    launch_row_kernel(s, pick(chunks, std::integral_constant<int, R>{}), rows, R, args...);
  };
  if (c == 1)
    launch(std::integral_constant<int, 1>{});
  else
    launch(std::integral_constant<int, 2>{});
  return true;
}

// Rows of 129 to about 500 columns that strided_chunks leaves: a warp takes four rows (at most
// 253 columns of f32, 255 of f64) or two (at most 509 or 511) at once, their loads in flight
// together (short_row_values_kernel), unless cuda-reduce-rows:warp asks for the walk of
// one row at a time.
inline bool short_rows_wanted() {
  return rows_kernel_forced() != kRowsWarp;
}

// The tree kernel (a thread to a row) for rows of 33 to 128 columns of f32, 33 to 64 of f64.
// Measured on an H200 along rows, fraction of cub's Sum (tree / 32 threads a row): 1000003 × 40
// f32 0.46 / 0.20, f64 0.71 / 0.34; 1000003 × 128 f32 0.58 / 0.46, f64 0.62 / 0.72 (one warp a
// block holds 33 KiB of rows: six warps an SM); 1000003 × 17 f32 0.30, f64 0.49 against 0.56 and
// 0.76 with eight threads a row (its copy into shared memory keeps too few bytes in flight).
template <class T>
bool tree_rows_wanted(i64 cols) {
  return cols > 32 && cols <= (sizeof(T) == 4 ? kTreeMaxCols : kTreeMaxCols / 2);
}

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

template <class T, Fn F>
void launch_rows(cudaStream_t s, const T* a, i64 rows, i64 cols, i64 ld, double* rowvals, int code,
                 double count) {
  if (try_launch_staged_rows(s, a, rows, cols, ld, rowvals, 0, StagedOneOp<F>{}, code, count))
    return;
  if (try_launch_strided_rows<T>(
          s, rows, cols,
          [](auto c, auto r) {
            return strided_row_values_kernel<T, F, decltype(c)::value, decltype(r)::value>;
          },
          a, rows, cols, ld, rowvals, code, count))
    return;
  if (tree_rows_wanted<T>(cols)) {
    launch_row_tree<T, F>(s, a, rows, cols, ld, rowvals, code, count);
    return;
  }
  if (cols <= kNarrowCols)
    with_narrow_tpr(cols, [&](auto tpr) {
      constexpr int TPR = decltype(tpr)::value;
      launch_row_kernel(s, row_values_kernel<T, F, row_unroll<T>(), TPR>, rows, warp_rows<TPR>(), a,
                        rows, cols, ld, rowvals, code, count);
    });
  else if (short_rows_wanted() && cols <= short_row_max_cols<T, 2>())
    launch_row_kernel(s, short_row_values_kernel<T, F, 2, 4>, rows, 4, a, rows, cols, ld, rowvals,
                      code, count);
  else if (short_rows_wanted() && cols <= short_row_max_cols<T, 4>())
    launch_row_kernel(s, short_row_values_kernel<T, F, 4, 2>, rows, 2, a, rows, cols, ld, rowvals,
                      code, count);
  else
    launch_row_kernel(s, row_values_kernel<T, F, row_unroll<T>(), kWholeRow>, rows, 1, a, rows,
                      cols, ld, rowvals, code, count);
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
