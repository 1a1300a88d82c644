// Batched tridiagonal solvers (src/cpu/tridiag) against a dense Gaussian elimination with
// partial pivoting, on random diagonally dominant systems, in row and interleaved layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "cpu/tridiag.hpp"
#include "cpu/tridiag_partition.hpp"
#include "cuda/heat2d_tiles_math.hpp"
#include "solver/adi_line.hpp"

namespace {

using tessera::BatchLayout;
using tessera::cpu::ConstTridiag;

unsigned fresh_seed() {
  return std::random_device{}();
}

// Dense solve of the n×n system built from one tridiagonal row set (cyclic: wrapped entries
// add, as tridiag.hpp defines for n = 1, 2).
std::vector<double> dense_solve(const std::vector<double>& a, const std::vector<double>& b,
                                const std::vector<double>& c, std::vector<double> d, bool cyclic) {
  const std::size_t n = b.size();
  std::vector<double> m(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    m[i * n + i] += b[i];
    if (i > 0)
      m[i * n + i - 1] += a[i];
    else if (cyclic)
      m[i * n + n - 1] += a[i];
    if (i + 1 < n)
      m[i * n + i + 1] += c[i];
    else if (cyclic)
      m[i * n + 0] += c[i];
  }
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t p = k;
    for (std::size_t i = k + 1; i < n; ++i)
      if (std::abs(m[i * n + k]) > std::abs(m[p * n + k]))
        p = i;
    if (p != k) {
      for (std::size_t j = 0; j < n; ++j)
        std::swap(m[k * n + j], m[p * n + j]);
      std::swap(d[k], d[p]);
    }
    for (std::size_t i = k + 1; i < n; ++i) {
      const double f = m[i * n + k] / m[k * n + k];
      for (std::size_t j = k; j < n; ++j)
        m[i * n + j] -= f * m[k * n + j];
      d[i] -= f * d[k];
    }
  }
  std::vector<double> x(n);
  for (std::size_t k = n; k-- > 0;) {
    double s = d[k];
    for (std::size_t j = k + 1; j < n; ++j)
      s -= m[k * n + j] * x[j];
    x[k] = s / m[k * n + k];
  }
  return x;
}

std::size_t index(const BatchLayout& L, std::int64_t s, std::int64_t i) {
  return static_cast<std::size_t>(s * L.system_stride + i * L.element_stride);
}
std::size_t storage(const BatchLayout& L) {
  return index(L, L.count - 1, L.n - 1) + 1;
}

struct Case {
  std::int64_t n, count;
  bool interleaved;
  std::int64_t pad; // extra leading dimension
};

BatchLayout layout_of(const Case& c) {
  return c.interleaved ? BatchLayout::interleaved(c.n, c.count, c.count + c.pad)
                       : BatchLayout::rows(c.n, c.count, c.n + c.pad);
}

const std::vector<Case> kCases = {
    {1, 1, false, 0},  {1, 5, true, 0},     {2, 3, false, 1},   {2, 4, true, 2},
    {3, 1, false, 0},  {3, 9, true, 0},     {17, 31, false, 3}, {17, 31, true, 0},
    {31, 17, true, 5}, {100, 13, false, 0}, {64, 8, false, 0},  {97, 33, true, 1},
};

// Random diagonally dominant coefficients (|b| > |a| + |c|), with either sign of b.
void fill_general(std::mt19937_64& rng, const BatchLayout& L, std::vector<double>& a,
                  std::vector<double>& b, std::vector<double>& c, std::vector<double>& d) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::size_t size = storage(L);
  a.assign(size, 0.0);
  b.assign(size, 0.0);
  c.assign(size, 0.0);
  d.assign(size, 0.0);
  for (std::int64_t s = 0; s < L.count; ++s)
    for (std::int64_t i = 0; i < L.n; ++i) {
      const auto k = index(L, s, i);
      a[k] = u(rng);
      c[k] = u(rng);
      const double mag = std::abs(a[k]) + std::abs(c[k]) + 0.5 + std::abs(u(rng));
      b[k] = u(rng) < 0 ? -mag : mag;
      d[k] = 10.0 * u(rng);
    }
}

std::vector<double> column(const std::vector<double>& v, const BatchLayout& L, std::int64_t s) {
  std::vector<double> out(static_cast<std::size_t>(L.n));
  for (std::int64_t i = 0; i < L.n; ++i)
    out[static_cast<std::size_t>(i)] = v[index(L, s, i)];
  return out;
}

// max |x - ref| / max(1, max |ref|) over one system.
double rel_error(const std::vector<double>& x, const std::vector<double>& ref) {
  double err = 0.0, scale = 1.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    err = std::max(err, std::abs(x[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return err / scale;
}

void check_general(bool cyclic) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (const Case& cs : kCases) {
    const BatchLayout L = layout_of(cs);
    std::vector<double> a, b, c, d;
    fill_general(rng, L, a, b, c, d);
    std::vector<double> x = d;
    if (cyclic)
      tessera::cpu::cyclic_batched(a.data(), b.data(), c.data(), x.data(), L);
    else
      tessera::cpu::thomas_batched(a.data(), b.data(), c.data(), x.data(), L);
    for (std::int64_t s = 0; s < L.count; ++s) {
      const auto ref =
          dense_solve(column(a, L, s), column(b, L, s), column(c, L, s), column(d, L, s), cyclic);
      ASSERT_LT(rel_error(column(x, L, s), ref), 1e-12)
          << "seed " << seed << ", n " << cs.n << ", count " << cs.count << ", system " << s
          << (cs.interleaved ? ", interleaved" : ", rows");
    }
  }
}

TEST(Tridiag, ThomasMatchesDenseSolve) {
  check_general(false);
}
TEST(Tridiag, CyclicMatchesDenseSolve) {
  check_general(true);
}

void check_constant(bool periodic) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const Case& cs : kCases) {
    const BatchLayout L = layout_of(cs);
    // An ADI-like matrix (1 + r, -r/2) half the time, random dominant coefficients otherwise.
    double a, b, c;
    if (u(rng) < 0) {
      const double r = 100.0 * std::abs(u(rng));
      a = c = -0.5 * r;
      b = 1.0 + r;
    } else {
      a = u(rng);
      c = u(rng);
      b = (std::abs(a) + std::abs(c) + 0.5) * (u(rng) < 0 ? -1.0 : 1.0);
    }
    const ConstTridiag f(a, b, c, cs.n, periodic);
    std::vector<double> d(storage(L), 0.0);
    for (std::int64_t s = 0; s < L.count; ++s)
      for (std::int64_t i = 0; i < L.n; ++i)
        d[index(L, s, i)] = 10.0 * u(rng);
    std::vector<double> x = d;
    f.solve(x.data(), L);
    const std::vector<double> av(static_cast<std::size_t>(cs.n), a),
        bv(static_cast<std::size_t>(cs.n), b), cv(static_cast<std::size_t>(cs.n), c);
    for (std::int64_t s = 0; s < L.count; ++s) {
      const auto ref = dense_solve(av, bv, cv, column(d, L, s), periodic);
      ASSERT_LT(rel_error(column(x, L, s), ref), 1e-12)
          << "seed " << seed << ", a " << a << ", b " << b << ", c " << c << ", n " << cs.n
          << ", count " << cs.count << ", system " << s
          << (cs.interleaved ? ", interleaved" : ", rows");
    }
    // Padding between systems is never written.
    for (std::size_t k = 0; k < d.size(); ++k) {
      const std::int64_t s = cs.interleaved ? static_cast<std::int64_t>(k) % L.element_stride
                                            : static_cast<std::int64_t>(k) / L.system_stride;
      const std::int64_t i = cs.interleaved ? static_cast<std::int64_t>(k) / L.element_stride
                                            : static_cast<std::int64_t>(k) % L.system_stride;
      if (s >= L.count || i >= L.n) {
        ASSERT_EQ(x[k], d[k]) << "padding element " << k << " was written";
      }
    }
  }
}

TEST(Tridiag, ConstantDirichletMatchesDenseSolve) {
  check_constant(false);
}
TEST(Tridiag, ConstantPeriodicMatchesDenseSolve) {
  check_constant(true);
}

// Grouped and single-system sweeps, and both layouts, give the same bits: what lets the solver
// produce identical fields on any rank count and the GPU replay the same operations.
TEST(Tridiag, ConstantSolveIsBitIdenticalAcrossLayoutsAndRanges) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (bool periodic : {false, true}) {
    const std::int64_t n = 37, count = 45;
    const ConstTridiag f(-0.7, 2.4, -0.7, n, periodic);
    std::vector<double> rows(static_cast<std::size_t>(n * count));
    for (auto& v : rows)
      v = u(rng);
    std::vector<double> inter(rows.size());
    for (std::int64_t s = 0; s < count; ++s)
      for (std::int64_t i = 0; i < n; ++i)
        inter[static_cast<std::size_t>(i * count + s)] = rows[static_cast<std::size_t>(s * n + i)];
    std::vector<double> pieces = rows;
    f.solve(rows.data(), BatchLayout::rows(n, count));
    f.solve(inter.data(), BatchLayout::interleaved(n, count));
    const BatchLayout L = BatchLayout::rows(n, count);
    // Ranges that start and end inside groups, and whole groups plus a remainder.
    f.solve_range(pieces.data(), L, 0, 3);
    f.solve_range(pieces.data(), L, 3, 17);
    f.solve_range(pieces.data(), L, 20, count - 20);
    for (std::int64_t s = 0; s < count; ++s)
      for (std::int64_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(s * n + i);
        ASSERT_EQ(rows[k], inter[static_cast<std::size_t>(i * count + s)])
            << "seed " << seed << ", system " << s << ", element " << i;
        ASSERT_EQ(rows[k], pieces[k]) << "seed " << seed << ", system " << s << ", element " << i;
      }
  }
}

TEST(Tridiag, EmptyBatchesAreNoOps) {
  const ConstTridiag f(-1.0, 4.0, -1.0, 5, true);
  f.solve(nullptr, BatchLayout::rows(5, 0));
  tessera::cpu::thomas_batched(nullptr, nullptr, nullptr, nullptr, BatchLayout::rows(0, 4));
}

TEST(Tridiag, RejectsBadInput) {
  EXPECT_THROW(ConstTridiag(1.0, 2.0, 1.0, 0, false), tessera::InputError);
  // Singular without pivoting: the first pivot is zero.
  EXPECT_THROW(ConstTridiag(1.0, 0.0, 1.0, 4, false), tessera::InputError);
  const ConstTridiag f(-1.0, 4.0, -1.0, 5, false);
  std::vector<double> x(12, 1.0);
  EXPECT_THROW(f.solve(x.data(), BatchLayout::rows(6, 2)), tessera::InputError);
}

// ---------------------------------------------------------------------------------------------
// The partition method (cpu/tridiag_partition.hpp) against plain Thomas (ConstTridiag), and the
// one-GPU tile step (cuda/heat2d_tiles_math.hpp) replayed lane by lane on the host against the
// ADI step of the CPU backend (AdiLine).

double max_rel(const std::vector<double>& x, const std::vector<double>& ref) {
  double e = 0.0, m = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    e = std::max(e, std::abs(x[k] - ref[k]));
    m = std::max(m, std::abs(ref[k]));
  }
  return e / m;
}

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
        const tessera::cpu::PartitionedTridiag p(h, n, tile, periodic);
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
  EXPECT_THROW(tessera::cpu::PartitionedTridiag(1.0, 64, 32, false), tessera::InputError);
  EXPECT_THROW(tessera::cpu::PartitionedTridiag(1.0, 10, 1, false), tessera::InputError);
}

namespace tiles = tessera::cuda::tiles;

tiles::Piece host_piece(const tessera::cpu::PartitionPiece& q) {
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

void host_axis(const tessera::cpu::PartitionedTridiag& p, std::int64_t lines, double g,
               tiles::Axis& a, tiles::Reduced& r) {
  a.n = p.n();
  a.tiles = static_cast<int>(p.tiles());
  a.h = p.h();
  a.add_bc = !p.periodic() && g != 0.0;
  a.hg = a.add_bc ? p.h() * g : 0.0;
  a.full = tiles::full_piece(p.full());
  a.last = host_piece(p.last());
  r = {a.tiles,        lines,         p.h(),        p.periodic(), p.sub().data(),
       p.inv().data(), p.cp().data(), p.z().data(), p.corner(),   p.inv_correction()};
}

// cuda::TiledHeat2d's kernels, one lane after the other.
struct HostTiles {
  tessera::cpu::PartitionedTridiag px, py;
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
      tiles::reduced_line(rx, pxv[cur].data(), fx[cur].data(), sx.data(), l);
    each_tile(s, [&](const tiles::TileBox& b, double* R) {
      lanes([&](int l) { tiles::phase_rhs(s, b, l, R); });
      lanes([&](int l) { tiles::solve_x(s, b, l, R); });
      lanes([&](int l) { tiles::reduced_y(s, b, l, R); });
    });
    for (std::int64_t l = 0; l < ry.lines; ++l)
      tiles::reduced_line(ry, pyv.data(), fyv.data(), sy.data(), l);
    each_tile(s, [&](const tiles::TileBox& b, double* R) {
      lanes([&](int l) { tiles::phase_rhs(s, b, l, R); });
      lanes([&](int l) { tiles::solve_x(s, b, l, R); });
      lanes([&](int l) { tiles::solve_y(s, b, l, R); });
      lanes([&](int l) { tiles::reduced_x(s, b, l, R); });
    });
    cur = 1 - cur;
  }
};

std::vector<double> transposed(const std::vector<double>& a, std::int64_t rows, std::int64_t cols) {
  std::vector<double> t(a.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      t[static_cast<std::size_t>(c * rows + r)] = a[static_cast<std::size_t>(r * cols + c)];
  return t;
}

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
