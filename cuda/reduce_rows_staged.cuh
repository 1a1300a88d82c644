// Row values of matrices with few, long rows (17 × 10⁶, say), in the canonical order of
// core/reduction.hpp, on Hopper (compute capability 9.0) and later.
//
// The canonical order leaves 128 dependent chains of additions per row; with one warp per row
// (row_values_kernel) a 17-row matrix keeps 17 warps busy, each with a few hundred bytes of
// loads in flight, and runs at a few per cent of the memory bandwidth. Here a row is cut into
// its four groups of 32 lanes, one block per group, the four blocks of a row forming one thread
// block cluster: thread t of the block's first warp owns one canonical lane of group g, and the
// group's share of the row (32 consecutive elements of every 128) streams through a ring of
// shared memory filled by asynchronous copies that the block's other warps issue stages ahead
// (tens of KiB in flight per block instead of a few hundred bytes). Each slot of the ring has
// a pair of barriers (ring_barriers.cuh: filled, emptied), so the adding warp waits only for the
// stage it adds and the copying warps only for a slot to come free: with one block-wide barrier
// per stage instead, every warp waited for the additions, and a stage took about three times
// its dependent additions. At the end the four blocks put their lanes in block 0's shared memory
// (distributed shared memory), which applies the fixed halving tree.
//
// The row is read as the aligned 16-byte vectors that cover it, like warp_row_scan: with m the
// row's phase within a vector, aligned position p (from the vector holding column 0) is column
// p - m, so a thread always meets the same canonical lane ((32g + t - m) mod 128), in ascending
// column order. No byte outside the row is read: the vector holding column 0 is copied element
// by element from column 0 on, and the one holding the last column is copied up to it (the
// rest of its slot keeps whatever it held, and is never added).
#pragma once

#include <cooperative_groups.h>
#include <cuda_pipeline.h>

#include "cuda/reduce_fused.cuh"
#include "cuda/ring_barriers.cuh"

namespace tessera::cuda::detail {

// Lane groups per row (one block each), lanes per group (one thread each).
constexpr int kStagedGroups = 4;
constexpr int kStagedLanes = kSumLanes / kStagedGroups;
static_assert(kStagedLanes == 32, "one warp per lane group");

// Copying warps per block, beside the one that adds. More than one copying warp doubled the
// speed; eight gave the same as four.
constexpr int kStagedWarps = 4;
constexpr int kStagedThreads = kStagedLanes + 32 * kStagedWarps;

// Steps (chunks of 128 columns) per stage, and stages in the ring: 8 KiB (f32) or 16 KiB (f64) a
// stage, 64 KiB or 96 KiB in flight per block (three or two blocks to an SM, for matrices with
// more lane groups than the device has SMs). The adding warp pays a fixed cost per stage (the
// wait, the arrival, the loop), which 64 steps bring near the chain of additions itself
// (docs/performance.md).
constexpr int kStagedSteps = 64;
template <class T>
constexpr int staged_stages() {
  return sizeof(T) == 4 ? 8 : 6;
}
template <class T>
constexpr std::size_t staged_ring_bytes() {
  return static_cast<std::size_t>(staged_stages<T>()) * kStagedSteps * kStagedLanes * sizeof(T);
}

// One op's accumulator of one lane.
template <Fn F>
struct StagedOneOp {
  static constexpr int kSlots = 1;
  __device__ void init() { v = Policy<F>::identity(); }
  __device__ __forceinline__ void add(double d) { v = Policy<F>::combine(v, Policy<F>::f(d)); }
  // g(integral_constant<Fn, F>, slot, value) per op.
  template <class G>
  __device__ __forceinline__ void each(G&& g) const {
    g(std::integral_constant<Fn, F>{}, 0, v);
  }
  double v;
};

// The accumulators of one lane for every op of a mask (fused reductions; slots as
// reduce_fused.cuh). Min, Max and NormInf compare the converted doubles: the same choices as
// in the data's type.
struct StagedMaskOps {
  static constexpr int kSlots = 6;
  __device__ void init() {
    each_fn(mask, [&](auto fc) {
      constexpr Fn F = decltype(fc)::value;
      v[static_cast<int>(F)] = Policy<F>::identity();
    });
  }
  __device__ __forceinline__ void add(double d) {
    each_fn(mask, [&](auto fc) {
      constexpr Fn F = decltype(fc)::value;
      constexpr int f = static_cast<int>(F);
      v[f] = Policy<F>::combine(v[f], Policy<F>::f(d));
    });
  }
  template <class G>
  __device__ __forceinline__ void each(G&& g) const {
    each_fn(mask, [&](auto fc) {
      constexpr Fn F = decltype(fc)::value;
      g(fc, fn_slot(mask, F), v[static_cast<int>(F)]);
    });
  }
  unsigned mask;
  double v[6];
};

// Queues the asynchronous copies of stage k of group g's share of a row into `slot`: aligned
// positions 128·(kS + s) + 32g + [0, 32) for s < S, in 16-byte pieces spread over the copying
// warps (t: the thread's place among them). `end` = m + cols is the aligned position past the
// row's last element.
template <class T>
__device__ __forceinline__ void staged_issue(T* slot, const T* pa, int m, i64 end, i64 k, int g,
                                             int t) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  constexpr int kPiecesPerStep = kStagedLanes / V;
  constexpr int kPerThread = kStagedSteps * kPiecesPerStep / (32 * kStagedWarps);
  const i64 base = 128 * k * kStagedSteps; // the stage's first aligned position
  // Most stages lie inside the row for every thread: whole vectors, no checks.
  if ((k > 0 || m == 0) && base + 128 * kStagedSteps <= end) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int q = t + 32 * kStagedWarps * i;
      const int s = q / kPiecesPerStep, pc = q % kPiecesPerStep;
      __pipeline_memcpy_async(slot + s * kStagedLanes + V * pc,
                              pa + base + 128 * s + kStagedLanes * g + V * pc, 16);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int q = t + 32 * kStagedWarps * i;
    const int s = q / kPiecesPerStep, pc = q % kPiecesPerStep;
    const i64 p0 = base + 128 * s + kStagedLanes * g + V * pc;
    T* dst = slot + s * kStagedLanes + V * pc;
    if (p0 < m) { // the vector holding column 0: its elements from column 0 on
      for (int e = m; e < V; ++e)
        if (p0 + e < end)
          __pipeline_memcpy_async(dst + e, pa + p0 + e, sizeof(T));
      continue;
    }
    const i64 n = end - p0; // elements of this piece inside the row
    if (n >= V) {
      __pipeline_memcpy_async(dst, pa + p0, 16);
    } else { // the vector holding the last column: its elements up to it
      for (int e = 0; e < n; ++e)
        __pipeline_memcpy_async(dst + e, pa + p0 + e, sizeof(T));
    }
  }
}

// The row values of rows [0, rows): block b takes lane group b % 4 of row b / 4 (clusters of
// four blocks: warp 0 adds, the kStagedWarps others copy). Values go to out[slot * stride + row],
// finished by finish_code.
template <class T, class Ops>
__global__ void __launch_bounds__(kStagedThreads)
    staged_row_values_kernel(const T* __restrict__ a, i64 rows, i64 cols, i64 ld, double* out,
                             i64 stride, Ops ops, int finish_code, double count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  constexpr int NS = staged_stages<T>();
  constexpr int kSlotElems = kStagedSteps * kStagedLanes;
  extern __shared__ __align__(16) unsigned char staged_ring[];
  __shared__ double lanes[Ops::kSlots][kSumLanes];
  // Per slot: filled (each copying thread arrives once its copies have landed), emptied (each
  // adding thread arrives once it has read the slot). See ring_barriers.cuh.
  __shared__ std::uint64_t filled[NS], emptied[NS];
  T* ring = reinterpret_cast<T*>(staged_ring);

  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const int g = static_cast<int>(cluster.block_rank());
  const i64 r = blockIdx.x / kStagedGroups;
  const int t = static_cast<int>(threadIdx.x);
  const bool adder = t < kStagedLanes;
  const T* row = a + r * ld;
  const int m = static_cast<int>((reinterpret_cast<std::uintptr_t>(row) / sizeof(T)) & (V - 1));
  const T* pa = row - m;
  const i64 end = m + cols;
  const i64 stages = ((end + 127) / 128 + kStagedSteps - 1) / kStagedSteps;

  // Block 0's shared memory may be written only once it runs: this arrival, waited for before
  // those writes, says so without holding anything up now.
  auto started = cluster.barrier_arrive();
  if (t == 0) {
    for (int i = 0; i < NS; ++i) {
      ring_barrier_init(&filled[i], 32 * kStagedWarps);
      ring_barrier_init(&emptied[i], kStagedLanes);
    }
  }
  __syncthreads();
  if (!adder) {
    // Stage k goes to slot k % NS once the adder has emptied it (round k / NS - 1 of that slot;
    // the first NS stages at once).
#pragma unroll 1
    for (i64 k = 0; k < stages; ++k) {
      const int slot = static_cast<int>(k % NS);
      const auto round = static_cast<std::uint32_t>(k / NS);
      if (round > 0)
        ring_barrier_wait(&emptied[slot], (round - 1) & 1);
      staged_issue<T>(ring + slot * kSlotElems, pa, m, end, k, g, t - kStagedLanes);
      ring_barrier_arrive_on_copies(&filled[slot]);
    }
  } else {
    ops.init();
    // The column of this thread's element in step 0 of stage k: c0 + 128·kS.
    const i64 c0 = kStagedLanes * g + t - m;
#pragma unroll 1
    for (i64 k = 0; k < stages; ++k) {
      const int si = static_cast<int>(k % NS);
      ring_barrier_wait(&filled[si], static_cast<std::uint32_t>(k / NS) & 1);
      const T* slot = ring + si * kSlotElems + t;
      const i64 ck = c0 + 128 * k * kStagedSteps;
      // Every column of the stage, for every thread, inside the row: no checks.
      const bool whole = (k > 0 || g > 0 || m == 0) &&
                         128 * ((k + 1) * kStagedSteps - 1) + kStagedLanes * (g + 1) - m <= cols;
      if (whole) {
#pragma unroll
        for (int s = 0; s < kStagedSteps; ++s)
          ops.add(static_cast<double>(slot[s * kStagedLanes]));
      } else {
#pragma unroll 4
        for (int s = 0; s < kStagedSteps; ++s) {
          const i64 c = ck + 128 * s;
          if (c >= 0 && c < cols)
            ops.add(static_cast<double>(slot[s * kStagedLanes]));
        }
      }
      ring_barrier_arrive(&emptied[si]);
    }
  }

  // Lane (32g + t - m) mod 128 of every op, into block 0's shared memory; block 0 applies the
  // halving tree (thread t holding lanes 4t … 4t+3, as lane_tree expects).
  cluster.barrier_wait(std::move(started));
  double* lanes0 = cluster.map_shared_rank(&lanes[0][0], 0);
  const int lane = (kStagedLanes * g + t - m) & (kSumLanes - 1);
  if (adder)
    ops.each([&](auto, int slot, double v) { lanes0[slot * kSumLanes + lane] = v; });
  cluster.sync();
  if (g != 0 || !adder)
    return;
  ops.each([&](auto fc, int slot, double) {
    double v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      v[j] = lanes[slot][4 * t + j];
    const double value = lane_tree<Policy<decltype(fc)::value>>(v, t);
    if (t == 0)
      out[slot * stride + r] = finish(finish_code, value, count);
  });
#else
  (void)a, (void)rows, (void)cols, (void)ld, (void)out, (void)stride, (void)ops;
  (void)finish_code, (void)count;
  __trap(); // launched only where staged_rows_ready() says so
#endif
}

} // namespace tessera::cuda::detail
