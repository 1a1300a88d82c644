// The reduced systems of the one-GPU heat2d tile step (heat2d_tiles.hpp) solved by a warp per
// line, per lane: plain C++ for the device (cuda/heat2d_reduced.cu runs it with shuffles) and the
// host (replay_reduced_line below runs the 32 lanes in turn, for the tests).
//
// Both sweeps of the factorised reduced system (PartitionedTridiag) are first-order linear
// recurrences, y_k = a_k y_{k-1} + b_k forward and x_k = a'_k x_{k+1} + y_k back, so each is a
// composition of affine maps. Lane c takes the positions [c q, c q + q) of its line (q = ⌈K/32⌉):
// it runs its piece of the recurrence from 0, which gives the piece as one affine map of the
// value entering it; a scan of the 32 maps over the warp (5 rounds of shuffles) gives each lane
// the value entering its piece, and the piece is finished by one fma per position, independent of
// each other. The dependent chain is q + 5 steps per sweep instead of K; the result agrees with
// the sequential sweep to rounding (the products of the a_k are below 1 in size: the system is
// diagonally dominant).
#pragma once

#include "cuda/heat2d_tiles_step.hpp"

namespace tessera::cuda::tiles {

constexpr int kWarpLanes = 32;
// The most positions per lane kept in registers: lines of up to 32 × 8 = 256 tiles (n = 8192);
// longer ones take the thread-per-line solve (heat2d_tiles_math.hpp's reduced_line). Measured on
// an H200: at n = 16384 (16 positions per lane, 90 registers) the warps made the step slower
// (2.63 ms against 2.50 ms), at n = 8192 and 4096 faster.
constexpr int kMaxChunk = 8;

TESSERA_HD int reduced_chunk(int tiles) {
  return (tiles + kWarpLanes - 1) / kWarpLanes;
}

// x → a x + b.
struct Affine {
  double a = 1.0, b = 0.0;
};
// `later` after `earlier` (the scan's step; the same expression on host and device).
TESSERA_HD Affine compose(const Affine& later, const Affine& earlier) {
  return {later.a * earlier.a, fma(later.a, earlier.b, later.b)};
}

// The lane's positions: k0 = c q, n of them (0 past the end of the line).
struct Chunk {
  int k0, n;
};
TESSERA_HD Chunk lane_chunk(int tiles, int q, int lane) {
  const int k0 = lane * q, left = tiles - k0;
  return {k0, left < 0 ? 0 : (left < q ? left : q)};
}

// The reduced right-hand side P_k + h F_{k+1} of position k of line l (as reduced_line).
TESSERA_HD double reduced_rhs(const Reduced& r, const double* P, const double* F, int k, i64 l) {
  const int K = r.tiles;
  const double f = k + 1 < K || r.periodic ? F[(k + 1 < K ? k + 1 : 0) * r.lines + l] : 0.0;
  return fma(r.h, f, P[k * r.lines + l]);
}

// The forward sweep over the lane's positions from y_{k0-1} = 0: v holds the right-hand side on
// entry and y there on exit, g the factor of y_{k0-1} in each; returns the piece's map.
template <int kQ>
TESSERA_HD Affine forward_piece(const Reduced& r, Chunk c, double (&v)[kQ], double (&g)[kQ]) {
  double y = 0.0, p = 1.0;
  TESSERA_UNROLL
  for (int j = 0; j < kQ; ++j)
    if (j < c.n) {
      const int k = c.k0 + j;
      const double inv = TESSERA_LDG(r.inv + k);
      if (k == 0) {
        y = v[j] * inv;
        p = 0.0;
      } else {
        const double sub = TESSERA_LDG(r.sub + k);
        y = fma(-sub, y, v[j]) * inv;
        p = -sub * p * inv;
      }
      v[j] = y;
      g[j] = p;
    }
  return {p, y};
}

// The backward sweep over the lane's positions from x_{k0+n} = 0: v holds y on entry and x on
// exit, g the factor of x_{k0+n} in each; returns the piece's map.
template <int kQ>
TESSERA_HD Affine backward_piece(const Reduced& r, Chunk c, double (&v)[kQ], double (&g)[kQ]) {
  double x = 0.0, p = 1.0;
  TESSERA_UNROLL
  for (int j = kQ - 1; j >= 0; --j)
    if (j < c.n) {
      const int k = c.k0 + j;
      if (k + 1 == r.tiles) {
        x = v[j];
        p = 0.0;
      } else {
        const double cp = TESSERA_LDG(r.cp + k);
        x = fma(-cp, x, v[j]);
        p = -cp * p;
      }
      v[j] = x;
      g[j] = p;
    }
  return {p, x};
}

// The piece finished from the value `in` that enters it.
template <int kQ>
TESSERA_HD void finish_piece(Chunk c, double in, double (&v)[kQ], const double (&g)[kQ]) {
  TESSERA_UNROLL
  for (int j = 0; j < kQ; ++j)
    if (j < c.n)
      v[j] = fma(g[j], in, v[j]);
}

// Periodic lines: the Sherman–Morrison correction x -= fac z, fac from x_0 and x_{K-1}. The
// latter is y_{K-1}, which the forward scan ends with: taking it there spares the search for the
// lane and register that hold it (a selection that made ptxas spill).
template <int kQ>
TESSERA_HD void correct_piece(const Reduced& r, Chunk c, double x0, double xlast, double (&v)[kQ]) {
  const double fac = fma(r.corner, xlast, x0) * r.invc; // no contraction left to a compiler
  TESSERA_UNROLL
  for (int j = 0; j < kQ; ++j)
    if (j < c.n)
      v[j] = fma(-fac, TESSERA_LDG(r.z + c.k0 + j), v[j]);
}

// The scans over the lanes' maps as the warp's shuffles compute them (Hillis–Steele: in round d
// lane c composes its map with lane c - d's, or c + d's going back), for the host replay.
inline void scan_forward(Affine (&m)[kWarpLanes]) {
  for (int d = 1; d < kWarpLanes; d *= 2)
    for (int c = kWarpLanes - 1; c >= d; --c) // downwards: m[c - d] is still the round's input
      m[c] = compose(m[c], m[c - d]);
}
inline void scan_backward(Affine (&m)[kWarpLanes]) {
  for (int d = 1; d < kWarpLanes; d *= 2)
    for (int c = 0; c + d < kWarpLanes; ++c) // upwards: m[c + d] is still the round's input
      m[c] = compose(m[c], m[c + d]);
}

// One line l solved as the warp solves it, the 32 lanes in turn (the host tests' replay).
template <int kQ = kMaxChunk>
void replay_reduced_line(const Reduced& r, const double* P, const double* F, double* S, i64 l) {
  const int q = reduced_chunk(r.tiles);
  double v[kWarpLanes][kQ] = {}, g[kWarpLanes][kQ] = {};
  Affine fw[kWarpLanes], bw[kWarpLanes];
  for (int c = 0; c < kWarpLanes; ++c) {
    const Chunk ch = lane_chunk(r.tiles, q, c);
    for (int j = 0; j < ch.n; ++j)
      v[c][j] = reduced_rhs(r, P, F, ch.k0 + j, l);
    fw[c] = forward_piece(r, ch, v[c], g[c]);
  }
  scan_forward(fw);
  const double xlast = fw[kWarpLanes - 1].b;
  for (int c = 0; c < kWarpLanes; ++c) {
    const Chunk ch = lane_chunk(r.tiles, q, c);
    finish_piece(ch, c > 0 ? fw[c - 1].b : 0.0, v[c], g[c]);
    bw[c] = backward_piece(r, ch, v[c], g[c]);
  }
  scan_backward(bw);
  for (int c = 0; c < kWarpLanes; ++c)
    finish_piece(lane_chunk(r.tiles, q, c), c + 1 < kWarpLanes ? bw[c + 1].b : 0.0, v[c], g[c]);
  const double x0 = v[0][0]; // before lane 0 corrects it
  for (int c = 0; c < kWarpLanes; ++c) {
    const Chunk ch = lane_chunk(r.tiles, q, c);
    if (r.periodic)
      correct_piece(r, ch, x0, xlast, v[c]);
    for (int j = 0; j < ch.n; ++j)
      S[(ch.k0 + j) * r.lines + l] = v[c][j];
  }
}

} // namespace tessera::cuda::tiles
