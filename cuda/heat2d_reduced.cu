// The reduced systems of the one-GPU heat2d tile step (heat2d_tiles.hpp) and their choice table:
// a warp per line, the two sweeps by scans of affine maps (heat2d_tiles_reduced.hpp), for lines
// of at most 32 × tiles::kMaxChunk tiles, or one thread per line (the sequential sweeps of
// heat2d_tiles_math.hpp's reduced_line) for longer ones (docs/performance.md).
#include "core/settings.hpp"
#include "cuda/heat2d_tiles.hpp"
#include "cuda/heat2d_tiles_reduced.hpp"
#include "cuda/launch.cuh"

namespace tessera::cuda {

namespace {

using tiles::i64;

constexpr unsigned kAll = 0xffffffffu;
constexpr int kLines = 4; // lines per block, a warp each

// The warp's inclusive scans of the lanes' maps, upwards (forward sweep) and downwards (back);
// the same compositions as tiles::scan_forward and scan_backward.
__device__ __forceinline__ tiles::Affine scan_up(tiles::Affine m, int lane) {
  TESSERA_UNROLL
  for (int d = 1; d < 32; d *= 2) {
    const tiles::Affine e{__shfl_up_sync(kAll, m.a, d), __shfl_up_sync(kAll, m.b, d)};
    if (lane >= d)
      m = tiles::compose(m, e);
  }
  return m;
}
__device__ __forceinline__ tiles::Affine scan_down(tiles::Affine m, int lane) {
  TESSERA_UNROLL
  for (int d = 1; d < 32; d *= 2) {
    const tiles::Affine e{__shfl_down_sync(kAll, m.a, d), __shfl_down_sync(kAll, m.b, d)};
    if (lane + d < 32)
      m = tiles::compose(m, e);
  }
  return m;
}

// Shared-memory layout of the block's lines: lane c's positions at c * pitch + j. An odd pitch
// puts the 32 lanes' reads of one j on distinct banks; the line stride, 4 (mod 16) doubles past a
// multiple of 16, puts the staging loop's four lines of one position on distinct banks too.
struct Stage {
  int q, pitch, line;
  __device__ explicit Stage(int tiles)
      : q(tiles::reduced_chunk(tiles)), pitch(q | 1), line(32 * pitch + 4) {}
  __device__ int at(int m, int k) const { return m * line + (k / q) * pitch + k % q; }
};

// A warp per line, kLines lines per block. The values of the lines are strided by the line
// count in P, F and S: they pass through shared memory, where the block's threads read and write
// them position by position (the kLines lines of one position are one 32-byte sector), so that
// every global access is coalesced whatever the warp's lanes then take.
template <int kQ>
__global__ void __launch_bounds__(32 * kLines)
    reduced_warp_kernel(const tiles::Reduced r, const double* __restrict__ P,
                        const double* __restrict__ F, double* __restrict__ S) {
  extern __shared__ double stage[];
  const Stage st(r.tiles);
  const i64 l0 = static_cast<i64>(blockIdx.x) * kLines;
  const int t = static_cast<int>(threadIdx.x), K = r.tiles;
  for (int e = t; e < K * kLines; e += 32 * kLines) {
    const int k = e / kLines, m = e % kLines;
    // Lines past the end solve zeros: no warp leaves before the block's barriers.
    stage[st.at(m, k)] = l0 + m < r.lines ? tiles::reduced_rhs(r, P, F, k, l0 + m) : 0.0;
  }
  __syncthreads();
  const int lane = t % 32;
  double* mine = stage + (t / 32) * st.line + lane * st.pitch;
  const tiles::Chunk c = tiles::lane_chunk(K, st.q, lane);
  double v[kQ], g[kQ];
  TESSERA_UNROLL
  for (int j = 0; j < kQ; ++j)
    v[j] = j < c.n ? mine[j] : 0.0;
  const tiles::Affine f = scan_up(tiles::forward_piece(r, c, v, g), lane);
  const double y_in = __shfl_up_sync(kAll, f.b, 1);
  tiles::finish_piece(c, lane > 0 ? y_in : 0.0, v, g);
  const tiles::Affine b = scan_down(tiles::backward_piece(r, c, v, g), lane);
  const double x_in = __shfl_down_sync(kAll, b.b, 1);
  tiles::finish_piece(c, lane < 31 ? x_in : 0.0, v, g);
  if (r.periodic) {
    const double x0 = __shfl_sync(kAll, v[0], 0);
    const double xlast = __shfl_sync(kAll, f.b, 31); // x_{K-1} = y_{K-1}, the forward scan's end
    tiles::correct_piece(r, c, x0, xlast, v);
  }
  TESSERA_UNROLL
  for (int j = 0; j < kQ; ++j)
    if (j < c.n)
      mine[j] = v[j];
  __syncthreads();
  for (int e = t; e < K * kLines; e += 32 * kLines) {
    const int k = e / kLines, m = e % kLines;
    if (l0 + m < r.lines)
      S[k * r.lines + l0 + m] = stage[st.at(m, k)];
  }
}

__global__ void __launch_bounds__(128)
    reduced_thread_kernel(const tiles::Reduced r, const double* __restrict__ P,
                          const double* __restrict__ F, double* __restrict__ S) {
  const i64 l = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l < r.lines)
    tiles::reduced_line(r, P, F, S, l);
}

} // namespace

ReducedSolve default_reduced() {
  static const ReducedSolve how =
      settings::kernel(settings::KernelOp::Heat2dReduced).value_or(0) == 1 ? ReducedSolve::Thread
                                                                           : ReducedSolve::Warp;
  return how;
}

bool reduced_by_warps(const tiles::Reduced& r, ReducedSolve how) {
  return how == ReducedSolve::Warp && tiles::reduced_chunk(r.tiles) <= tiles::kMaxChunk;
}

namespace {

// The kernel solve_reduced runs for r and `how` (all three take the same arguments): a warp per
// line with the fewest registers that hold the lane's positions, or a thread per line.
using ReducedKernelFn = void (*)(tiles::Reduced, const double*, const double*, double*);
ReducedKernelFn reduced_kernel_for(const tiles::Reduced& r, ReducedSolve how) {
  if (!reduced_by_warps(r, how))
    return reduced_thread_kernel;
  return tiles::reduced_chunk(r.tiles) <= 4 ? reduced_warp_kernel<4>
                                            : reduced_warp_kernel<tiles::kMaxChunk>;
}

} // namespace

void load_reduced(const tiles::Reduced& r, ReducedSolve how) {
  cudaFuncAttributes a{};
  CHECK_CUDA(cudaFuncGetAttributes(&a, reduced_kernel_for(r, how)));
}

void solve_reduced(CUstream_st* stream, const tiles::Reduced& r, const double* P, const double* F,
                   double* S, ReducedSolve how) {
  if (r.lines == 0 || r.tiles == 0)
    return;
  const ReducedKernelFn kernel = reduced_kernel_for(r, how);
  if (reduced_by_warps(r, how)) {
    const int q = tiles::reduced_chunk(r.tiles);
    const auto bytes = static_cast<std::size_t>(kLines) * (32 * (q | 1) + 4) * sizeof(double);
    const auto blocks = static_cast<unsigned>((r.lines + kLines - 1) / kLines);
    kernel<<<blocks, 32 * kLines, bytes, stream>>>(r, P, F, S);
  } else {
    const auto blocks = static_cast<unsigned>((r.lines + 127) / 128);
    kernel<<<blocks, 128, 0, stream>>>(r, P, F, S);
  }
  CHECK_CUDA_LAUNCH();
}

} // namespace tessera::cuda
