// The one-GPU heat2d step by tiles (see heat2d_tiles.hpp): the tables of the partition method on
// the device, and the kernels that run heat2d_tiles_math.hpp's phases, one warp per tile.
#include <vector>

#include "core/settings.hpp"
#include "cuda/heat2d_tiles.hpp"
#include "cuda/launch.cuh"

namespace tessera::cuda {

namespace {

using tiles::i64;
using tiles::kPitch;
using tiles::kTile;

constexpr int kWarps = 4;       // tiles per block
constexpr int kBlocksPerSm = 4; // registers capped for 16 warps per multiprocessor

enum class Mode { Prepare, Half, Full };

// The phases of one tile in the order of kMode, the x and y pieces px, py.
template <Mode kMode, class PX, class PY, class B>
__device__ __forceinline__ void run_tile(const tiles::Step& s, const PX& px, const PY& py,
                                         const B& b, int lane, double* R) {
  tiles::phase_rhs(s, b, lane, R);
  __syncwarp();
  if constexpr (kMode == Mode::Prepare) {
    tiles::phase_reduced_x(s, px, b, lane, R);
    return;
  }
  tiles::phase_solve_x(s, px, b, lane, R);
  __syncwarp();
  if constexpr (kMode == Mode::Half) {
    tiles::phase_reduced_y(s, py, b, lane, R);
    return;
  }
  tiles::phase_solve_y(s, py, b, lane, R);
  __syncwarp();
  tiles::phase_reduced_x(s, px, b, lane, R);
}

// A tile of any size, its pieces chosen position by position: the first version's path, taken by
// every tile in it and by the last row and column of tiles in the fixed-size version.
template <Mode kMode>
__device__ __forceinline__ void any_tile(const tiles::Step& s, int ty, int tx, int lane,
                                         double* R) {
  const tiles::TileBox b = tiles::tile_box(s, ty, tx);
  tiles::phase_rhs(s, b, lane, R);
  __syncwarp();
  if constexpr (kMode == Mode::Prepare) {
    tiles::reduced_x(s, b, lane, R);
    return;
  }
  tiles::solve_x(s, b, lane, R);
  __syncwarp();
  if constexpr (kMode == Mode::Half) {
    tiles::reduced_y(s, b, lane, R);
    return;
  }
  tiles::solve_y(s, b, lane, R);
  __syncwarp();
  tiles::reduced_x(s, b, lane, R);
}
// The same, not inlined, so that its registers and spills stay out of the fixed-size path; the
// step is the kernel's __grid_constant__ parameter, read where it lies.
template <Mode kMode>
__device__ __noinline__ void edge_tile(const tiles::Step& s, int ty, int tx, int lane, double* R) {
  any_tile<kMode>(s, ty, tx, lane, R);
}

// One warp per tile, the first version: every tile through any_tile.
template <Mode kMode>
__global__ void __launch_bounds__(32 * kWarps, kBlocksPerSm) tile_kernel(const tiles::Step s) {
  __shared__ double smem[kWarps][kTile * kPitch];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const i64 id = static_cast<i64>(blockIdx.x) * kWarps + warp;
  if (id >= static_cast<i64>(s.x.tiles) * s.y.tiles)
    return; // the whole warp
  any_tile<kMode>(s, static_cast<int>(id / s.x.tiles), static_cast<int>(id % s.x.tiles), lane,
                  smem[warp]);
}

// One warp per tile: the tiles of kTile × kTile cells (all but the last row and column of tiles)
// through a path compiled for that size, straight-line code with no per-position tests. Tables:
// the full tiles' solve tables read from shared memory (kShared) or from the parameters' constant
// bank. kBlocks blocks per multiprocessor: the register cap.
template <Mode kMode, bool kShared, int kBlocks>
__global__ void __launch_bounds__(32 * kWarps, kBlocks)
    fixed_tile_kernel(const __grid_constant__ tiles::Step s) {
  __shared__ double smem[kWarps][kTile * kPitch];
  __shared__ __align__(16) double table[2][tiles::kSharedTable];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  if constexpr (kShared) {
    if (warp < 2 && lane < kTile - 1)
      tiles::share_table(warp == 0 ? s.x.full : s.y.full, table[warp], lane);
    __syncthreads();
  }
  const i64 id = static_cast<i64>(blockIdx.x) * kWarps + warp;
  if (id >= static_cast<i64>(s.x.tiles) * s.y.tiles)
    return; // the whole warp
  const int ty = static_cast<int>(id / s.x.tiles), tx = static_cast<int>(id % s.x.tiles);
  double* R = smem[warp];
  if (ty + 1 < s.y.tiles && tx + 1 < s.x.tiles) {
    if constexpr (kShared)
      run_tile<kMode>(s, tiles::SharedPiece(s.x.full, table[0]),
                      tiles::SharedPiece(s.y.full, table[1]), tiles::full_box(ty, tx), lane, R);
    else
      run_tile<kMode>(s, tiles::FixedPiece(s.x.full), tiles::FixedPiece(s.y.full),
                      tiles::full_box(ty, tx), lane, R);
  } else {
    edge_tile<kMode>(s, ty, tx, lane, R);
  }
}

// The host tables of one direction, appended to `t`; the offsets are fixed up once `t` is on the
// device (pointers are set from the device base by `bind`).
struct Offsets {
  std::size_t piece[2][6];
  std::size_t sub, inv, cp, z;
};

std::size_t append(std::vector<double>& t, const std::vector<double>& v) {
  const std::size_t at = t.size();
  t.insert(t.end(), v.begin(), v.end());
  t.resize(t.size() + 1, 0.0); // never empty, never adjacent: a q = 0 piece still points inside
  return at;
}

Offsets append_axis(std::vector<double>& t, const PartitionedTridiag& p) {
  Offsets o{};
  const PartitionPiece* pieces[2] = {&p.full(), &p.last()};
  for (int k = 0; k < 2; ++k) {
    const PartitionPiece& q = *pieces[k];
    o.piece[k][0] = append(t, q.inv);
    o.piece[k][1] = append(t, q.upper);
    o.piece[k][2] = append(t, q.phi_l);
    o.piece[k][3] = append(t, q.phi_r);
    o.piece[k][4] = append(t, q.w_first);
    o.piece[k][5] = append(t, q.w_last);
  }
  o.sub = append(t, p.sub());
  o.inv = append(t, p.inv());
  o.cp = append(t, p.cp());
  o.z = append(t, p.z());
  return o;
}

tiles::Piece bind_piece(const double* base, const std::size_t (&o)[6], const PartitionPiece& q) {
  tiles::Piece p;
  p.inv_p = base + o[0];
  p.upper_p = base + o[1];
  p.phi_l_p = base + o[2];
  p.phi_r_p = base + o[3];
  p.w_first_p = base + o[4];
  p.w_last_p = base + o[5];
  p.q = static_cast<int>(q.q);
  p.pl_first = q.pl_first;
  p.pr_first = q.pr_first;
  return p;
}

void bind_axis(const double* base, const Offsets& o, const PartitionedTridiag& p,
               std::int64_t lines, double g, tiles::Axis& a, tiles::Reduced& r) {
  tiles::set_axis_values(p, g, a);
  a.last = bind_piece(base, o.piece[1], p.last());
  r.tiles = a.tiles;
  r.lines = lines;
  r.h = p.h();
  r.periodic = p.periodic();
  r.sub = base + o.sub;
  r.inv = base + o.inv;
  r.cp = base + o.cp;
  r.z = base + o.z;
  r.corner = p.corner();
  r.invc = p.inv_correction();
}

unsigned tile_blocks(const tiles::Step& s) {
  const i64 n = static_cast<i64>(s.x.tiles) * s.y.tiles;
  return static_cast<unsigned>((n + kWarps - 1) / kWarps);
}

using Kernel = TiledHeat2d::Kernel;

// TESSERA_KERNEL=heat2d-tiles:…, read once (heat2d_tiles.hpp).
Kernel default_kernel() {
  static const Kernel k = [] {
    constexpr Kernel kinds[] = {Kernel::Shared, Kernel::Shared20, Kernel::Constant, Kernel::First};
    return kinds[settings::kernel(settings::KernelOp::Heat2dTiles).value_or(0)];
  }();
  return k;
}

// The tile kernel of `kernel` for kMode (all take the step by value).
using TileKernelFn = void (*)(tiles::Step);
template <Mode kMode>
TileKernelFn tile_kernel_for(Kernel kernel) {
  switch (kernel) {
  case Kernel::Shared20:
    return fixed_tile_kernel<kMode, true, kBlocksPerSm + 1>;
  case Kernel::Constant:
    return fixed_tile_kernel<kMode, false, kBlocksPerSm>;
  case Kernel::First:
    return tile_kernel<kMode>;
  case Kernel::Shared:
    break;
  }
  return fixed_tile_kernel<kMode, true, kBlocksPerSm>;
}

template <Mode kMode>
void launch_tiles(CUstream_st* stream, Kernel kernel, const tiles::Step& s) {
  const unsigned blocks = tile_blocks(s), threads = 32 * kWarps;
  tile_kernel_for<kMode>(kernel)<<<blocks, threads, 0, stream>>>(s);
  CHECK_CUDA_LAUNCH();
}

// CUDA loads a kernel at its first launch (lazy loading, the default): milliseconds that would
// land in the first step and, in a short run, in its time per step. Asking for a kernel's
// attributes loads it now.
template <Mode kMode>
void load_tiles(Kernel kernel) {
  cudaFuncAttributes a{};
  CHECK_CUDA(cudaFuncGetAttributes(&a, tile_kernel_for<kMode>(kernel)));
}

// TESSERA_KERNEL=heat2d-reduced:…, read once (heat2d_tiles.hpp).
ReducedSolve default_reduced() {
  static const ReducedSolve how =
      settings::kernel(settings::KernelOp::Heat2dReduced).value_or(0) == 1 ? ReducedSolve::Thread
                                                                           : ReducedSolve::Warp;
  return how;
}

} // namespace

TiledHeat2d::TiledHeat2d(std::int64_t nx, std::int64_t ny, double hx, double hy, bool periodic,
                         double g) {
  TESSERA_CUDA_REQUIRE(fits(nx, ny), "TiledHeat2d: the grid " + detail::shape_str(ny, nx) +
                                         " has fewer than three tiles a side");
  const PartitionedTridiag px(hx, nx, kTile, periodic), py(hy, ny, kTile, periodic);
  std::vector<double> t;
  const Offsets ox = append_axis(t, px), oy = append_axis(t, py);
  tables_ = DeviceBuffer(t.size() * sizeof(double));
  copy(tables_.data(), t.data(), t.size() * sizeof(double));
  const double* base = tables_.as<double>();
  const double gg = periodic ? 0.0 : g;
  base_.nx = nx;
  base_.ny = ny;
  base_.periodic = periodic;
  base_.g = gg;
  bind_axis(base, ox, px, ny, gg, base_.x, rx_);
  bind_axis(base, oy, py, nx, gg, base_.y, ry_);
  // x: S, P[2], F[2] (Kx × ny each); y: S, P, F (Ky × nx each).
  const auto xs = static_cast<std::size_t>(base_.x.tiles) * static_cast<std::size_t>(ny);
  const auto ys = static_cast<std::size_t>(base_.y.tiles) * static_cast<std::size_t>(nx);
  work_ = DeviceBuffer((5 * xs + 3 * ys) * sizeof(double));
  double* w = work_.as<double>();
  CHECK_CUDA(cudaMemset(w, 0, work_.bytes()));
  sx_ = w;
  base_.sx = sx_;
  px_[0] = w + xs;
  px_[1] = w + 2 * xs;
  fx_[0] = w + 3 * xs;
  fx_[1] = w + 4 * xs;
  sy_ = w + 5 * xs;
  base_.sy = sy_;
  base_.py = w + 5 * xs + ys;
  base_.fy = w + 5 * xs + 2 * ys;
  set_kernel(default_kernel());
  set_reduced(default_reduced());
}

void TiledHeat2d::set_kernel(Kernel k) {
  kernel_ = k;
  load_tiles<Mode::Prepare>(k);
  load_tiles<Mode::Half>(k);
  load_tiles<Mode::Full>(k);
}

void TiledHeat2d::set_reduced(ReducedSolve how) {
  reduced_ = how;
  load_reduced(rx_, how);
  load_reduced(ry_, how);
}

void TiledHeat2d::prepare(CUstream_st* stream, const double* u) {
  tiles::Step s = base_;
  s.u = u;
  s.px_out = px_[cur_];
  s.fx_out = fx_[cur_];
  launch_tiles<Mode::Prepare>(stream, kernel_, s);
}

void TiledHeat2d::half(CUstream_st* stream, const double* u) {
  tiles::Step s = base_;
  s.u = u;
  s.fx = fx_[cur_];
  solve_reduced(stream, rx_, px_[cur_], fx_[cur_], sx_, reduced_);
  launch_tiles<Mode::Half>(stream, kernel_, s);
}

void TiledHeat2d::full(CUstream_st* stream, const double* u, double* u_next) {
  tiles::Step s = base_;
  s.u = u;
  s.u_next = u_next;
  s.fx = fx_[cur_];
  s.px_out = px_[1 - cur_];
  s.fx_out = fx_[1 - cur_];
  solve_reduced(stream, ry_, base_.py, base_.fy, sy_, reduced_);
  launch_tiles<Mode::Full>(stream, kernel_, s);
  cur_ = 1 - cur_;
}

namespace {
// Bytes per step of the parts (heat2d_tiles.hpp): `reads` passes over u^n with the tiles' halo
// rows, `writes` of u^{n+1}, and per line and tile the values of the reduced systems.
double tile_bytes(const tiles::Step& s, double reads, double writes, double x_values,
                  double y_values) {
  const double nx = static_cast<double>(s.nx), ny = static_cast<double>(s.ny);
  return 8.0 * (nx * ny * (reads * (1.0 + 2.0 / kTile) + writes) + x_values * s.x.tiles * ny +
                y_values * s.y.tiles * nx);
}
// Reduced solve: P and F read, S written; one thread per line reads and writes S once more
// (periodic: twice more).
double reduced_values(const tiles::Step& s, bool by_warps) {
  return by_warps ? 3.0 : (s.periodic ? 7.0 : 5.0);
}
} // namespace

double TiledHeat2d::bytes_prepare() const noexcept {
  return tile_bytes(base_, 1, 0, 2, 0);
}
// The half kernel reads S_{k-1}, S_k, S_{k+1}, F_{k+1} of x and writes P, F of y.
double TiledHeat2d::bytes_half() const noexcept {
  return tile_bytes(base_, 1, 0, 4 + reduced_values(base_, reduced_by_warps(rx_, reduced_)), 2);
}
// The full kernel reads four values of x and of y and writes P, F of x.
double TiledHeat2d::bytes_full() const noexcept {
  return tile_bytes(base_, 1, 1, 6, 4 + reduced_values(base_, reduced_by_warps(ry_, reduced_)));
}

} // namespace tessera::cuda
