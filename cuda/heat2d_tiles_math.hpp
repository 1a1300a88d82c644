// The one-GPU heat2d step by tiles, per lane: the work of one lane of the warp that owns a
// kTile × kTile tile, phase by phase, as plain C++ that nvcc compiles for the device and the host
// compiler for the tests (which replay the phases lane by lane on the CPU). cuda/heat2d_tiles.cu
// runs them with a __syncwarp() between phases; cuda/heat2d_tiles.hpp says what the step is.
//
// The field u[j][i] is row-major (ny rows of nx), the layout of the solver's device state on one
// rank. Tiles are aligned to the separators of both directions (core/tridiag_partition.hpp): tile
// (ty, tx) holds rows ty*kTile … and columns tx*kTile …, its last row and last column being the
// separators of its column and row pieces. The reduced systems' values are stored by tile and
// line: X[k * ny + row] (x-lines, one per row), Y[k * nx + col] (y-lines, one per column), so the
// lanes of a warp touch consecutive addresses.
#pragma once

#include <cmath>

#include "cuda/heat2d_tiles_step.hpp"

namespace tessera::cuda::tiles {

// c + h ((before + after) - 2 c)
TESSERA_HD double stencil(double c, double before, double after, double h) {
  return fma(h, (before + after) - 2.0 * c, c);
}

// A tile's first value from its reduced input F and its two separators. The tile itself stores
// this (not its local solve's first value, equal to rounding) so that what its neighbour reads
// from S and F is what the field holds: the next step's inputs are then the same whether they
// come from the step before or from the stored state (bit-identical restarts).
TESSERA_HD double first_value(double pl_first, double pr_first, double f, double left,
                              double right) {
  return fma(right, pr_first, fma(left, pl_first, f));
}

// What line l's interior in tile k needs from its direction's reduced system: the separators
// before (`left`, 0 past a Dirichlet end) and after it (`right`), its first value's reduced input
// `f`, and the neighbouring values just before and after the tile (the boundary value past a
// Dirichlet end; `after` is the first value of the next tile). The five loads do not depend on
// each other nor on the tile's solve: issued before it, they are in flight while it runs.
struct LineEnds {
  double left, right, f, before, after;
};
TESSERA_HD LineEnds line_ends(const Axis& a, const double* S, const double* F, i64 L, int k, i64 l,
                              bool periodic, double g) {
  const int K = a.tiles;
  const int prev = k > 0 ? k - 1 : K - 1, next = k + 1 < K ? k + 1 : 0;
  const double s_prev = S[prev * L + l], s_k = S[k * L + l], s_next = S[next * L + l];
  const double f_k = F[k * L + l], f_next = F[next * L + l];
  const bool has_prev = k > 0 || periodic, has_next = k + 1 < K || periodic;
  LineEnds e;
  e.left = has_prev ? s_prev : 0.0;
  e.right = s_k;
  e.f = f_k;
  e.before = has_prev ? s_prev : g;
  e.after = has_next ? first_value(a.pl_first(next), a.pr_first(next), f_next, s_k, s_next) : g;
  return e;
}

// Phase rhs (lane = column j): R = (I + h_y D_y) u^n on the tile, plus the x boundary terms.
template <class B>
TESSERA_HD void phase_rhs(const Step& s, const B& b, int j, double* R) {
  if (j >= b.mc)
    return;
  const i64 nx = s.nx, col = b.c0 + j;
  double v[kTile];
  TESSERA_UNROLL
  for (int i = 0; i < kTile; ++i)
    if (i < b.mr)
      v[i] = s.u[(b.r0 + i) * nx + col];
  const double above =
      b.r0 > 0 ? s.u[(b.r0 - 1) * nx + col] : (s.periodic ? s.u[(s.ny - 1) * nx + col] : s.g);
  const i64 rb = b.r0 + b.mr;
  const double below = rb < s.ny ? s.u[rb * nx + col] : (s.periodic ? s.u[col] : s.g);
  const double bc = s.x.add_bc && (col == 0 || col == nx - 1) ? s.x.hg : 0.0;
  double before = above;
  TESSERA_UNROLL
  for (int i = 0; i < kTile; ++i)
    if (i < b.mr) {
      const double after = i + 1 < b.mr ? v[i + 1] : below;
      R[i * kPitch + j] = stencil(v[i], before, after, s.y.h) + bc;
      before = v[i];
    }
}

// y_first and y_last of a piece's interior (values d[k], k < q) by dot products. D is a pointer
// (a shared-memory row) or a register array (taken by reference, indexed by constants only).
template <class P, class D>
TESSERA_HD void first_last(const P& p, const D& d, double& yf, double& yl) {
  double f = 0.0, l = 0.0;
  TESSERA_UNROLL
  for (int k = 0; k < kTile - 1; ++k)
    if (k < p.q) {
      const double v = d[k];
      f = fma(p.w_first(k), v, f);
      l = fma(p.w_last(k), v, l);
    }
  yf = f;
  yl = l;
}

// Phase reduced_x (lane = row i): the x reduced inputs of R's rows.
template <class P, class B>
TESSERA_HD void phase_reduced_x(const Step& s, const P& p, const B& b, int i, const double* R) {
  if (i >= b.mr)
    return;
  const double* row = R + i * kPitch;
  double yf, yl;
  first_last(p, row, yf, yl);
  const i64 at = static_cast<i64>(b.tx) * s.ny + b.r0 + i;
  s.px_out[at] = fma(s.x.h, yl, row[p.q]);
  s.fx_out[at] = yf;
}

// Thomas on a piece's interior, in registers: v[k] (k < q) := A_q^{-1} v.
template <class P>
TESSERA_HD void local_solve(const P& p, double h, double (&v)[kTile]) {
  double prev = 0.0;
  TESSERA_UNROLL
  for (int k = 0; k < kTile - 1; ++k)
    if (k < p.q) {
      prev = fma(h, prev, v[k]) * p.inv(k); // (d - lower prev) inv, lower = -h
      v[k] = prev;
    }
  TESSERA_UNROLL
  for (int k = kTile - 3; k >= 0; --k)
    if (k + 1 < p.q) {
      prev = fma(-p.upper(k), prev, v[k]);
      v[k] = prev;
    }
}

// Interior solution from the local one and the two separators; v[q] = right.
template <class P>
TESSERA_HD void combine(const P& p, double left, double right, double (&v)[kTile]) {
  TESSERA_UNROLL
  for (int k = 0; k < kTile; ++k) {
    if (k < p.q)
      v[k] = fma(right, p.phi_r(k), fma(left, p.phi_l(k), v[k]));
    else if (k == p.q)
      v[k] = right;
  }
}

// Phase solve_x (lane = row i): u* on the tile's row, then R = (I + h_x D_x) u*.
template <class P, class B>
TESSERA_HD void phase_solve_x(const Step& s, const P& p, const B& b, int i, double* R) {
  if (i >= b.mr)
    return;
  const LineEnds e = line_ends(s.x, s.sx, s.fx, s.ny, b.tx, b.r0 + i, s.periodic, s.g);
  double* row = R + i * kPitch;
  double v[kTile];
  TESSERA_UNROLL
  for (int k = 0; k < kTile; ++k)
    if (k <= p.q)
      v[k] = row[k];
  local_solve(p, s.x.h, v);
  combine(p, e.left, e.right, v);
  if (p.q > 0)
    v[0] = first_value(p.pl_first, p.pr_first, e.f, e.left, e.right);
  double before = e.before;
  const double after_tile = e.after;
  TESSERA_UNROLL
  for (int k = 0; k < kTile; ++k)
    if (k <= p.q) {
      const double after = k < p.q ? v[k + 1 < kTile ? k + 1 : k] : after_tile;
      row[k] = stencil(v[k], before, after, s.x.h);
      before = v[k];
    }
}

// The column of R (lane = column j) with the y boundary terms, into registers.
template <class B>
TESSERA_HD void load_column(const Step& s, const B& b, int j, const double* R, double (&v)[kTile]) {
  // Row r0 + i is the first row (0) or the last (ny - 1) only as the tile's first or last row.
  const bool first = s.y.add_bc && b.r0 == 0, last = s.y.add_bc && b.r0 + b.mr == s.ny;
  TESSERA_UNROLL
  for (int i = 0; i < kTile; ++i)
    if (i < b.mr) {
      v[i] = R[i * kPitch + j];
      if ((i == 0 && first) || (i == b.mr - 1 && last))
        v[i] += s.y.hg;
    }
}

// Phase reduced_y (lane = column j): the y reduced inputs of R's columns.
template <class P, class B>
TESSERA_HD void phase_reduced_y(const Step& s, const P& p, const B& b, int j, const double* R) {
  if (j >= b.mc)
    return;
  double v[kTile];
  load_column(s, b, j, R, v);
  double yf, yl;
  first_last(p, v, yf, yl);
  // The separator row from shared memory: a register array indexed by q would go to local memory.
  const i64 r = b.r0 + p.q;
  const double sep = R[p.q * kPitch + j] + (s.y.add_bc && (r == 0 || r == s.ny - 1) ? s.y.hg : 0.0);
  const i64 at = static_cast<i64>(b.ty) * s.nx + b.c0 + j;
  s.py[at] = fma(s.y.h, yl, sep);
  s.fy[at] = yf;
}

// Phase solve_y (lane = column j): u^{n+1} on the tile's column, written out, then
// R = (I + h_y D_y) u^{n+1} plus the x boundary terms: the next step's first right-hand side.
template <class P, class B>
TESSERA_HD void phase_solve_y(const Step& s, const P& p, const B& b, int j, double* R) {
  if (j >= b.mc)
    return;
  const i64 l = b.c0 + j;
  const LineEnds e = line_ends(s.y, s.sy, s.fy, s.nx, b.ty, l, s.periodic, s.g);
  double v[kTile];
  load_column(s, b, j, R, v);
  local_solve(p, s.y.h, v);
  combine(p, e.left, e.right, v);
  if (p.q > 0)
    v[0] = first_value(p.pl_first, p.pr_first, e.f, e.left, e.right);
  TESSERA_UNROLL
  for (int i = 0; i < kTile; ++i)
    if (i < b.mr)
      s.u_next[(b.r0 + i) * s.nx + l] = v[i];
  const double bc = s.x.add_bc && (l == 0 || l == s.nx - 1) ? s.x.hg : 0.0;
  double before = e.before;
  const double after_tile = e.after;
  TESSERA_UNROLL
  for (int i = 0; i < kTile; ++i)
    if (i < b.mr) {
      const double after = i + 1 < b.mr ? v[i + 1 < kTile ? i + 1 : i] : after_tile;
      R[i * kPitch + j] = stencil(v[i], before, after, s.y.h) + bc;
      before = v[i];
    }
}

// The phases with the tile's pieces: the full tiles' tables by value, the last tile's by pointer.
#define TESSERA_TILE_PIECE(axis, k, call)                                                          \
  do {                                                                                             \
    if ((k) == (axis).tiles - 1)                                                                   \
      call((axis).last);                                                                           \
    else                                                                                           \
      call((axis).full);                                                                           \
  } while (false)

TESSERA_HD void reduced_x(const Step& s, const TileBox& b, int lane, const double* R) {
  auto f = [&](const auto& p) { phase_reduced_x(s, p, b, lane, R); };
  TESSERA_TILE_PIECE(s.x, b.tx, f);
}
TESSERA_HD void solve_x(const Step& s, const TileBox& b, int lane, double* R) {
  auto f = [&](const auto& p) { phase_solve_x(s, p, b, lane, R); };
  TESSERA_TILE_PIECE(s.x, b.tx, f);
}
TESSERA_HD void reduced_y(const Step& s, const TileBox& b, int lane, const double* R) {
  auto f = [&](const auto& p) { phase_reduced_y(s, p, b, lane, R); };
  TESSERA_TILE_PIECE(s.y, b.ty, f);
}
TESSERA_HD void solve_y(const Step& s, const TileBox& b, int lane, double* R) {
  auto f = [&](const auto& p) { phase_solve_y(s, p, b, lane, R); };
  TESSERA_TILE_PIECE(s.y, b.ty, f);
}

// The reduced solve of one line l: S = M^{-1} (P + h F_{k+1}), by one thread (ReducedSolve::Thread,
// and lines too long for a warp's registers: heat2d_tiles_reduced.hpp). One thread per line gives
// few warps (4096 lines: one per multiprocessor), so each sweep goes kAhead tiles at a time, the
// chunk's loads issued together before its recurrence, and going back before any of the chunk's
// values is overwritten (with L unknown the compiler cannot tell S[(k-1) L + l] from S[k L + l],
// and would wait for each load in turn).
constexpr int kAhead = 16;
TESSERA_HD void reduced_line(const Reduced& r, const double* __restrict__ P,
                             const double* __restrict__ F, double* __restrict__ S, i64 l) {
  const i64 L = r.lines;
  const int K = r.tiles;
  double y = 0.0;
  for (int k0 = 0; k0 < K; k0 += kAhead) {
    double p[kAhead], f[kAhead];
    TESSERA_UNROLL
    for (int j = 0; j < kAhead; ++j) {
      const int k = k0 + j;
      if (k < K) {
        const int next = k + 1 < K ? k + 1 : 0;
        p[j] = P[k * L + l];
        f[j] = F[next * L + l];
      }
    }
    TESSERA_UNROLL
    for (int j = 0; j < kAhead; ++j) {
      const int k = k0 + j;
      if (k < K) {
        const double rhs = fma(r.h, k + 1 < K || r.periodic ? f[j] : 0.0, p[j]);
        y = (k == 0 ? rhs : fma(-TESSERA_LDG(r.sub + k), y, rhs)) * TESSERA_LDG(r.inv + k);
        S[k * L + l] = y;
      }
    }
  }
  for (int k0 = K - 2; k0 >= 0; k0 -= kAhead) {
    double v[kAhead];
    TESSERA_UNROLL
    for (int j = 0; j < kAhead; ++j)
      if (k0 - j >= 0)
        v[j] = S[(k0 - j) * L + l];
    TESSERA_UNROLL
    for (int j = 0; j < kAhead; ++j) {
      const int k = k0 - j;
      if (k >= 0) {
        y = fma(-TESSERA_LDG(r.cp + k), y, v[j]);
        S[k * L + l] = y;
      }
    }
  }
  if (!r.periodic)
    return;
  const double fac = (y + r.corner * S[(K - 1) * L + l]) * r.invc;
  for (int k0 = 0; k0 < K; k0 += kAhead) {
    double v[kAhead];
    TESSERA_UNROLL
    for (int j = 0; j < kAhead; ++j)
      if (k0 + j < K)
        v[j] = S[(k0 + j) * L + l];
    TESSERA_UNROLL
    for (int j = 0; j < kAhead; ++j)
      if (k0 + j < K)
        S[(k0 + j) * L + l] = fma(-fac, TESSERA_LDG(r.z + k0 + j), v[j]);
  }
}

} // namespace tessera::cuda::tiles
