// What the one-GPU heat2d tile step works on: the tile size, a tile's box, the partition
// pieces of both directions (by pointer and, for full tiles, by value), the reduced systems and
// the parameters of one step. Plain C++ for the device and the host; the per-lane phases that
// use them: cuda/heat2d_tiles_math.hpp.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/tridiag_partition.hpp"

#if defined(__CUDACC__)
#define TESSERA_HD __host__ __device__ __forceinline__
#else
#define TESSERA_HD inline
#endif
// Device pass: unrolled loops keep the per-lane arrays in registers; read-only loads of tables.
#if defined(__CUDA_ARCH__)
#define TESSERA_UNROLL _Pragma("unroll")
#define TESSERA_LDG(p) __ldg(p)
#else
#define TESSERA_UNROLL
#define TESSERA_LDG(p) (*(p))
#endif

namespace tessera::cuda::tiles {

using i64 = std::int64_t;

constexpr int kTile = 32;         // positions per tile and direction (one lane each)
constexpr int kPitch = kTile + 1; // shared-memory row pitch (doubles) against bank conflicts

// One PartitionPiece (q values per array), read through pointers (the last, shorter tile).
struct Piece {
  const double* inv_p = nullptr;
  const double* upper_p = nullptr;
  const double* phi_l_p = nullptr;
  const double* phi_r_p = nullptr;
  const double* w_first_p = nullptr;
  const double* w_last_p = nullptr;
  int q = 0;
  double pl_first = 0.0, pr_first = 1.0;
  TESSERA_HD double inv(int k) const { return TESSERA_LDG(inv_p + k); }
  TESSERA_HD double upper(int k) const { return TESSERA_LDG(upper_p + k); }
  TESSERA_HD double phi_l(int k) const { return TESSERA_LDG(phi_l_p + k); }
  TESSERA_HD double phi_r(int k) const { return TESSERA_LDG(phi_r_p + k); }
  TESSERA_HD double w_first(int k) const { return TESSERA_LDG(w_first_p + k); }
  TESSERA_HD double w_last(int k) const { return TESSERA_LDG(w_last_p + k); }
};
// The same for the full tiles, by value: inside the kernel's parameters, the arrays are read from
// the constant bank with the constant indices of the unrolled loops (no loads, no cache misses as
// the streamed tiles pass through L1).
struct FullPiece {
  double inv_v[kTile - 1], upper_v[kTile - 1], phi_l_v[kTile - 1], phi_r_v[kTile - 1],
      w_first_v[kTile - 1], w_last_v[kTile - 1];
  int q = 0;
  double pl_first = 0.0, pr_first = 1.0;
  TESSERA_HD double inv(int k) const { return inv_v[k]; }
  TESSERA_HD double upper(int k) const { return upper_v[k]; }
  TESSERA_HD double phi_l(int k) const { return phi_l_v[k]; }
  TESSERA_HD double phi_r(int k) const { return phi_r_v[k]; }
  TESSERA_HD double w_first(int k) const { return w_first_v[k]; }
  TESSERA_HD double w_last(int k) const { return w_last_v[k]; }
};

// A full tile's piece by value (q = kTile - 1).
inline FullPiece full_piece(const PartitionPiece& q) {
  FullPiece p;
  for (std::size_t k = 0; k < q.inv.size() && k < kTile - 1; ++k) {
    p.inv_v[k] = q.inv[k];
    p.upper_v[k] = q.upper[k];
    p.phi_l_v[k] = q.phi_l[k];
    p.phi_r_v[k] = q.phi_r[k];
    p.w_first_v[k] = q.w_first[k];
    p.w_last_v[k] = q.w_last[k];
  }
  p.q = static_cast<int>(q.q);
  p.pl_first = q.pl_first;
  p.pr_first = q.pr_first;
  return p;
}

// A full tile's piece with its size a constant: the phases' loops over it then compile to
// straight-line code with no per-position tests (the interior tiles' path of the kernels).
struct FixedPiece {
  static constexpr int q = kTile - 1;
  const FullPiece& p;
  double pl_first, pr_first;
  TESSERA_HD explicit FixedPiece(const FullPiece& f)
      : p(f), pl_first(f.pl_first), pr_first(f.pr_first) {}
  TESSERA_HD double inv(int k) const { return p.inv_v[k]; }
  TESSERA_HD double upper(int k) const { return p.upper_v[k]; }
  TESSERA_HD double phi_l(int k) const { return p.phi_l_v[k]; }
  TESSERA_HD double phi_r(int k) const { return p.phi_r_v[k]; }
  TESSERA_HD double w_first(int k) const { return p.w_first_v[k]; }
  TESSERA_HD double w_last(int k) const { return p.w_last_v[k]; }
};

// The same tables copied to shared memory (kSharedTable doubles, 16-byte aligned) in the order
// the phases read them: inv, upper, then (phi_l, phi_r) and (w_first, w_last) in pairs, so that
// each pair is one 16-byte load. Shared memory, unlike the constant bank, serves every warp at
// the same speed whatever the others read, and its loads can be issued ahead of the sweeps.
constexpr int kSharedTable = 6 * kTile;
struct SharedPiece {
  static constexpr int q = kTile - 1;
  const double* t;
  double pl_first, pr_first;
  TESSERA_HD SharedPiece(const FullPiece& f, const double* table)
      : t(table), pl_first(f.pl_first), pr_first(f.pr_first) {}
  TESSERA_HD double inv(int k) const { return t[k]; }
  TESSERA_HD double upper(int k) const { return t[kTile + k]; }
  TESSERA_HD double phi_l(int k) const { return t[2 * kTile + 2 * k]; }
  TESSERA_HD double phi_r(int k) const { return t[2 * kTile + 2 * k + 1]; }
  TESSERA_HD double w_first(int k) const { return t[4 * kTile + 2 * k]; }
  TESSERA_HD double w_last(int k) const { return t[4 * kTile + 2 * k + 1]; }
};
// Position k (< kTile - 1) of f's tables into `table`.
TESSERA_HD void share_table(const FullPiece& f, double* table, int k) {
  table[k] = f.inv_v[k];
  table[kTile + k] = f.upper_v[k];
  table[2 * kTile + 2 * k] = f.phi_l_v[k];
  table[2 * kTile + 2 * k + 1] = f.phi_r_v[k];
  table[4 * kTile + 2 * k] = f.w_first_v[k];
  table[4 * kTile + 2 * k + 1] = f.w_last_v[k];
}

// One direction: its partition and boundary terms.
struct Axis {
  i64 n = 0;       // positions per line
  int tiles = 0;   // K
  double h = 0.0;  // alpha dt / (2 spacing^2)
  double hg = 0.0; // h * boundary value, added at both ends when add_bc
  bool add_bc = false;
  FullPiece full;
  Piece last;
  TESSERA_HD double pl_first(int k) const { return k == tiles - 1 ? last.pl_first : full.pl_first; }
  TESSERA_HD double pr_first(int k) const { return k == tiles - 1 ? last.pr_first : full.pr_first; }
};

// An axis's values that do not depend on where its tables live (the device's bind_axis, the
// tests' host replay); the caller sets `last`.
inline void set_axis_values(const PartitionedTridiag& p, double g, Axis& a) {
  a.n = p.n();
  a.tiles = static_cast<int>(p.tiles());
  a.h = p.h();
  a.add_bc = !p.periodic() && g != 0.0;
  a.hg = a.add_bc ? p.h() * g : 0.0;
  a.full = full_piece(p.full());
}

// The reduced system of one direction (PartitionedTridiag's factorisation).
struct Reduced {
  int tiles = 0;
  i64 lines = 0;
  double h = 0.0;
  bool periodic = false;
  const double* sub = nullptr;
  const double* inv = nullptr;
  const double* cp = nullptr;
  const double* z = nullptr;
  double corner = 0.0, invc = 0.0;
};

struct Step {
  i64 nx = 0, ny = 0;
  bool periodic = false;
  double g = 0.0; // the Dirichlet boundary value (0 when periodic)
  Axis x, y;
  const double* u = nullptr;  // u^n
  double* u_next = nullptr;   // u^{n+1} (phase solve_y)
  const double* sx = nullptr; // x separators of this step  [Kx][ny]
  const double* fx = nullptr; // x first values of this step [Kx][ny]
  double* px_out = nullptr;   // x reduced inputs (phase reduced_x) [Kx][ny]
  double* fx_out = nullptr;
  double* py = nullptr; // y reduced inputs (phase reduced_y) [Ky][nx]
  double* fy = nullptr;
  const double* sy = nullptr; // y separators (phase solve_y; fy is read there) [Ky][nx]
};

struct TileBox {
  int ty, tx;
  i64 r0, c0; // first row and column
  int mr, mc; // rows and columns
};
TESSERA_HD TileBox tile_box(const Step& s, int ty, int tx) {
  TileBox b{ty, tx, static_cast<i64>(ty) * kTile, static_cast<i64>(tx) * kTile, 0, 0};
  b.mr = static_cast<int>(s.ny - b.r0 < kTile ? s.ny - b.r0 : kTile);
  b.mc = static_cast<int>(s.nx - b.c0 < kTile ? s.nx - b.c0 : kTile);
  return b;
}
// A tile with kTile rows and columns (every tile but the last of each direction), its size a
// constant for the phases.
struct FullBox {
  int ty, tx;
  i64 r0, c0;
  static constexpr int mr = kTile, mc = kTile;
};
TESSERA_HD FullBox full_box(int ty, int tx) {
  return {ty, tx, static_cast<i64>(ty) * kTile, static_cast<i64>(tx) * kTile};
}

} // namespace tessera::cuda::tiles
