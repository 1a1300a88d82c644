// The one-GPU heat2d step by tiles (see heat2d_tiles.hpp): the tables of the partition method on
// the device, and the choice table of the tile kernels (heat2d_tiles_kernel.cuh).
#include <vector>

#include "core/settings.hpp"
#include "cuda/heat2d_tiles.hpp"
#include "cuda/heat2d_tiles_kernel.cuh"

namespace tessera::cuda {

namespace {

using tiles::kTile;

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

// The tile kernels' choice table: one kernel, the full tiles compiled for their size with the
// solve tables in shared memory (heat2d_tiles_kernel.cuh); the kernels it replaced are the
// benchmark's (bench/cuda/heat2d_tile_variants.hpp).
template <TilePhase kMode>
constexpr auto kTileKernel = detail::fixed_tile_kernel<kMode, true, detail::kTileBlocksPerSm>;

void launch_tiles(CUstream_st* stream, TileLauncher launch, TilePhase phase, const tiles::Step& s) {
  if (launch != nullptr)
    return launch(stream, phase, s);
  switch (phase) {
  case TilePhase::Prepare:
    return detail::launch_tile_kernel(stream, kTileKernel<TilePhase::Prepare>, s);
  case TilePhase::Half:
    return detail::launch_tile_kernel(stream, kTileKernel<TilePhase::Half>, s);
  case TilePhase::Full:
    break;
  }
  detail::launch_tile_kernel(stream, kTileKernel<TilePhase::Full>, s);
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
  // The table has one kernel: TESSERA_KERNEL naming another warns (core/settings.hpp).
  (void)settings::kernel(settings::KernelOp::Heat2dTiles);
  set_tile_launcher(nullptr);
  set_reduced(default_reduced());
}

void TiledHeat2d::set_tile_launcher(TileLauncher launch) {
  launch_ = launch;
  if (launch != nullptr)
    return;
  detail::load_tile_kernel(kTileKernel<TilePhase::Prepare>);
  detail::load_tile_kernel(kTileKernel<TilePhase::Half>);
  detail::load_tile_kernel(kTileKernel<TilePhase::Full>);
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
  launch_tiles(stream, launch_, TilePhase::Prepare, s);
}

void TiledHeat2d::half(CUstream_st* stream, const double* u) {
  tiles::Step s = base_;
  s.u = u;
  s.fx = fx_[cur_];
  solve_reduced(stream, rx_, px_[cur_], fx_[cur_], sx_, reduced_);
  launch_tiles(stream, launch_, TilePhase::Half, s);
}

void TiledHeat2d::full(CUstream_st* stream, const double* u, double* u_next) {
  tiles::Step s = base_;
  s.u = u;
  s.u_next = u_next;
  s.fx = fx_[cur_];
  s.px_out = px_[1 - cur_];
  s.fx_out = fx_[1 - cur_];
  solve_reduced(stream, ry_, base_.py, base_.fy, sy_, reduced_);
  launch_tiles(stream, launch_, TilePhase::Full, s);
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
