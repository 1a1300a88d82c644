// The partition method (core/tridiag_partition.hpp) against plain Thomas (ConstTridiag), the
// ADI line work of the CPU backend (AdiLine) against plain formulas, and the one-GPU tile step
// (cuda/heat2d_tiles_math.hpp, with the reduced systems by warps: heat2d_tiles_reduced.hpp)
// replayed lane by lane on the host against the ADI step of AdiLine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/tridiag_partition.hpp"
#include "cpu/tridiag.hpp"
#include "cuda/heat2d_tiles_math.hpp"
#include "cuda/heat2d_tiles_reduced.hpp"
#include "solver/adi_line.hpp"
#include "test_tridiag_support.hpp"

namespace {

using tessera::BatchLayout;
using tessera::cpu::ConstTridiag;
using tridiag_test::fresh_seed;
using tridiag_test::max_rel;
using tridiag_test::transposed;

TEST(PartitionedTridiag, MatchesThomasOnAwkwardSizes) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (bool periodic : {false, true})
    for (std::int64_t tile : {2, 3, 7, 32})
      for (std::int64_t n : {5, 7, 8, 13, 22, 65, 66, 67, 96, 97, 101, 127, 128, 129, 1031, 4099}) {
        if (n <= 2 * tile)
          continue;
        const double h = std::pow(10.0, 2.3 * u(rng)); // 0.005 … 200
        const tessera::PartitionedTridiag p(h, n, tile, periodic);
        const ConstTridiag ref(-h, 1.0 + 2.0 * h, -h, n, periodic);
        std::vector<double> d(static_cast<std::size_t>(n));
        for (double& v : d)
          v = 10.0 * u(rng);
        std::vector<double> want = d, got = d;
        ref.solve(want.data(), BatchLayout::rows(n, 1));
        p.solve(got.data(), 1);
        EXPECT_LT(max_rel(got, want), 1e-13) << "seed " << seed << " n " << n << " tile " << tile
                                             << " h " << h << (periodic ? " periodic" : "");
      }
  EXPECT_THROW(tessera::PartitionedTridiag(1.0, 64, 32, false), tessera::InputError);
  EXPECT_THROW(tessera::PartitionedTridiag(1.0, 10, 1, false), tessera::InputError);
}

namespace tiles = tessera::cuda::tiles;

tiles::Piece host_piece(const tessera::PartitionPiece& q) {
  tiles::Piece p;
  p.inv_p = q.inv.data();
  p.upper_p = q.upper.data();
  p.phi_l_p = q.phi_l.data();
  p.phi_r_p = q.phi_r.data();
  p.w_first_p = q.w_first.data();
  p.w_last_p = q.w_last.data();
  p.q = static_cast<int>(q.q);
  p.pl_first = q.pl_first;
  p.pr_first = q.pr_first;
  return p;
}

void host_axis(const tessera::PartitionedTridiag& p, std::int64_t lines, double g, tiles::Axis& a,
               tiles::Reduced& r) {
  tiles::set_axis_values(p, g, a);
  a.last = host_piece(p.last());
  r = {a.tiles,        lines,         p.h(),        p.periodic(), p.sub().data(),
       p.inv().data(), p.cp().data(), p.z().data(), p.corner(),   p.inv_correction()};
}

// cuda::TiledHeat2d's kernels, one lane after the other.
struct HostTiles {
  tessera::PartitionedTridiag px, py;
  tiles::Step base;
  tiles::Reduced rx, ry;
  std::vector<double> sx, fx[2], pxv[2], sy, pyv, fyv, smem;
  int cur = 0;

  HostTiles(std::int64_t nx, std::int64_t ny, double hx, double hy, bool periodic, double g)
      : px(hx, nx, tiles::kTile, periodic), py(hy, ny, tiles::kTile, periodic),
        smem(tiles::kTile * tiles::kPitch) {
    base.nx = nx;
    base.ny = ny;
    base.periodic = periodic;
    base.g = periodic ? 0.0 : g;
    host_axis(px, ny, base.g, base.x, rx);
    host_axis(py, nx, base.g, base.y, ry);
    const auto xs = static_cast<std::size_t>(base.x.tiles * ny);
    const auto ys = static_cast<std::size_t>(base.y.tiles * nx);
    sx.assign(xs, 0.0);
    for (int k = 0; k < 2; ++k) {
      fx[k].assign(xs, 0.0);
      pxv[k].assign(xs, 0.0);
    }
    sy.assign(ys, 0.0);
    pyv.assign(ys, 0.0);
    fyv.assign(ys, 0.0);
  }
  template <class Phases>
  void each_tile(const tiles::Step& s, Phases&& phases) {
    for (int ty = 0; ty < s.y.tiles; ++ty)
      for (int tx = 0; tx < s.x.tiles; ++tx)
        phases(tiles::tile_box(s, ty, tx), smem.data());
  }
  template <class Phase>
  static void lanes(Phase&& phase) {
    for (int lane = 0; lane < 32; ++lane)
      phase(lane);
  }
  void prepare(const double* u) {
    tiles::Step s = base;
    s.u = u;
    s.px_out = pxv[cur].data();
    s.fx_out = fx[cur].data();
    each_tile(s, [&](const tiles::TileBox& b, double* R) {
      lanes([&](int l) { tiles::phase_rhs(s, b, l, R); });
      lanes([&](int l) { tiles::reduced_x(s, b, l, R); });
    });
  }
  void step(const double* u, double* u_next) {
    tiles::Step s = base;
    s.u = u;
    s.u_next = u_next;
    s.sx = sx.data();
    s.fx = fx[cur].data();
    s.px_out = pxv[1 - cur].data();
    s.fx_out = fx[1 - cur].data();
    s.py = pyv.data();
    s.fy = fyv.data();
    s.sy = sy.data();
    for (std::int64_t l = 0; l < rx.lines; ++l)
      tiles::replay_reduced_line(rx, pxv[cur].data(), fx[cur].data(), sx.data(), l);
    each_tile(s, [&](const tiles::TileBox& b, double* R) {
      lanes([&](int l) { tiles::phase_rhs(s, b, l, R); });
      lanes([&](int l) { tiles::solve_x(s, b, l, R); });
      lanes([&](int l) { tiles::reduced_y(s, b, l, R); });
    });
    for (std::int64_t l = 0; l < ry.lines; ++l)
      tiles::replay_reduced_line(ry, pyv.data(), fyv.data(), sy.data(), l);
    each_tile(s, [&](const tiles::TileBox& b, double* R) {
      lanes([&](int l) { tiles::phase_rhs(s, b, l, R); });
      lanes([&](int l) { tiles::solve_x(s, b, l, R); });
      lanes([&](int l) { tiles::solve_y(s, b, l, R); });
      lanes([&](int l) { tiles::reduced_x(s, b, l, R); });
    });
    cur = 1 - cur;
  }
};

// One Peaceman–Rachford step on the row-major field (ny × nx) with the CPU backend's line work.
std::vector<double> adi_step(const std::vector<double>& u, std::int64_t nx, std::int64_t ny,
                             const tessera::heat2d::AdiLine& lx,
                             const tessera::heat2d::AdiLine& ly) {
  std::vector<double> ut = transposed(u, ny, nx), rhs(u.size()), w(u.size());
  ly.apply_explicit(ut.data(), rhs.data(), nx);
  std::vector<double> lines = transposed(rhs, nx, ny);
  lx.solve(lines.data(), ny, w.data());
  std::vector<double> yl = transposed(w, ny, nx);
  ly.solve(yl.data(), nx);
  return transposed(yl, nx, ny);
}

using tessera::heat2d::Boundary;
// A boundary kind of the AdiLine tests, with its Dirichlet value.
struct Kind {
  Boundary b;
  double g;
};

// The one-rank CPU step solves x-lines as columns: the same bits as the rows after a transpose
// (narrow blocks by panels of columns, wide ones streamed row by row, split over the threads).
TEST(AdiLine, ColumnsGiveTheBitsOfRows) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (Kind k : {Kind{Boundary::Dirichlet, 0.0}, Kind{Boundary::Dirichlet, 0.6},
                 Kind{Boundary::Periodic, 0.0}})
    for (std::int64_t n : {1, 2, 3, 4, 17, 64, 97})
      for (std::int64_t lines : {1, 7, 63, 64, 65, 130, 257, 1000}) {
        const tessera::heat2d::AdiLine line(n, std::pow(10.0, 2.0 * u(rng)), k.b, k.g);
        std::vector<double> rows(static_cast<std::size_t>(n * lines));
        for (double& v : rows)
          v = u(rng);
        std::vector<double> cols = transposed(rows, lines, n), out_rows(rows.size()),
                            out_cols(rows.size());
        line.solve(rows.data(), lines, out_rows.data());
        line.solve_columns(cols.data(), lines, out_cols.data());
        EXPECT_TRUE(transposed(cols, n, lines) == rows &&
                    transposed(out_cols, n, lines) == out_rows)
            << "seed " << seed << " n " << n << " lines " << lines << " g " << k.g
            << (k.b == Boundary::Periodic ? " periodic" : "");
      }
}

// AdiLine::solve against the plain formulas on each row: the Dirichlet values moved to the
// right-hand side, ConstTridiag::solve, then v = u + h ((u_{i-1} + u_{i+1}) - 2 u_i). Lengths
// whose rows lie a multiple of 4 KiB apart (512, 4096) or near one (4097) are solved in a padded
// per-thread copy; the others (1 … 64, 4001) where they lie. Both must give these bits.
TEST(AdiLine, RowsGiveTheBitsOfAPlainSolve) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (Kind k : {Kind{Boundary::Dirichlet, 0.0}, Kind{Boundary::Dirichlet, 0.5 + u(rng)},
                 Kind{Boundary::Periodic, 0.0}})
    for (std::int64_t n : {1, 2, 3, 63, 64, 512, 4001, 4096, 4097})
      for (std::int64_t rows : {1, 7, 8, 9, 33}) {
        const double h = std::pow(10.0, 2.0 * u(rng));
        const bool periodic = k.b == Boundary::Periodic;
        const tessera::heat2d::AdiLine line(n, h, k.b, k.g);
        std::vector<double> got(static_cast<std::size_t>(n * rows));
        for (double& v : got)
          v = u(rng);
        std::vector<double> want = got, bare = got, out(got.size(), -7.0), want_out(got.size());
        line.solve(got.data(), rows, out.data());
        line.solve(bare.data(), rows);

        const auto at = [n](std::int64_t r, std::int64_t i) {
          return static_cast<std::size_t>(r * n + i);
        };
        for (std::int64_t r = 0; r < rows && !periodic && k.g != 0.0; ++r) {
          want[at(r, 0)] += h * k.g;
          want[at(r, n - 1)] += h * k.g;
        }
        ConstTridiag(-h, 1.0 + 2.0 * h, -h, n, periodic)
            .solve(want.data(), BatchLayout::rows(n, rows));
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t i = 0; i < n; ++i) {
            const double ui = want[at(r, i)];
            const double before = i > 0 ? want[at(r, i - 1)] : periodic ? want[at(r, n - 1)] : k.g;
            const double after = i < n - 1 ? want[at(r, i + 1)] : periodic ? want[at(r, 0)] : k.g;
            want_out[at(r, i)] = ui + h * ((before + after) - 2.0 * ui);
          }
        const std::size_t bytes = got.size() * sizeof(double);
        EXPECT_TRUE(std::memcmp(got.data(), want.data(), bytes) == 0 &&
                    std::memcmp(out.data(), want_out.data(), bytes) == 0 &&
                    std::memcmp(bare.data(), want.data(), bytes) == 0)
            << "seed " << seed << " n " << n << " rows " << rows << " h " << h << " g " << k.g
            << (periodic ? " periodic" : "");
      }
}

TEST(Heat2dTiles, HostReplayMatchesTheAdiStep) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  using tessera::heat2d::Boundary;
  struct Shape {
    std::int64_t nx, ny;
  };
  for (Boundary b : {Boundary::Dirichlet, Boundary::Periodic})
    for (Shape sh : {Shape{65, 67}, Shape{96, 97}, Shape{131, 100}, Shape{160, 193}}) {
      const double hx = std::pow(10.0, 2.0 * u(rng)), hy = std::pow(10.0, 2.0 * u(rng));
      const double g = b == Boundary::Dirichlet ? 0.75 * u(rng) : 0.0;
      const bool periodic = b == Boundary::Periodic;
      const tessera::heat2d::AdiLine lx(sh.nx, hx, b, g), ly(sh.ny, hy, b, g);
      HostTiles t(sh.nx, sh.ny, hx, hy, periodic, g);
      std::vector<double> field(static_cast<std::size_t>(sh.nx * sh.ny)), next(field.size());
      for (double& v : field)
        v = u(rng);
      std::vector<double> want = field;
      t.prepare(field.data());
      for (int step = 1; step <= 4; ++step) {
        want = adi_step(want, sh.nx, sh.ny, lx, ly);
        t.step(field.data(), next.data());
        std::swap(field, next);
        ASSERT_LT(max_rel(field, want), 1e-12)
            << "seed " << seed << " " << sh.nx << "x" << sh.ny << " step " << step << " hx " << hx
            << " hy " << hy << (periodic ? " periodic" : " dirichlet");
      }
      // The inputs a step leaves for the next are those of the state alone (restarts).
      const std::vector<double> px = t.pxv[t.cur], fx = t.fx[t.cur];
      t.prepare(field.data());
      EXPECT_TRUE(px == t.pxv[t.cur] && fx == t.fx[t.cur]) << "seed " << seed;
    }
}

} // namespace
