// The partition method for the constant-coefficient ADI matrix A = tridiag(-h, 1 + 2h, -h) on long
// lines (Dirichlet, or periodic: cyclic), the algorithm of the one-GPU heat2d step
// (cuda/heat2d_tiles.hpp) written out once on the host: its tables, and a plain reference solve.
//
// A line of n unknowns is cut into tiles of `tile` positions (the last one shorter when tile does
// not divide n). The last position of each tile is a separator, the q = width - 1 positions before
// it the tile's interior. With the separators s_k known, the interior of tile k is
//
//     x = y + s_{k-1} phi_l + s_k phi_r      y = A_q^{-1} d (the interior alone, zero outside)
//
// where A_q is the matrix of q unknowns, phi_l = h A_q^{-1} e_1 and phi_r = h A_q^{-1} e_q
// (s_{-1} is 0 for Dirichlet lines, whose boundary value is already in d, and s_{K-1} for periodic
// ones). The separator equations, with these substituted, form a tridiagonal system of K unknowns
// (cyclic for periodic lines) whose matrix depends on h, n and tile only:
//
//     sub_k s_{k-1} + diag_k s_k + sup_k s_{k+1} = d_{c_k} + h y_last(k) + h y_first(k+1)
//
// Only y's first and last values enter it; each is a dot product with a row of A_q^{-1}
// (w_first, w_last), so a tile contributes two values per line (P_k = d_{c_k} + h y_last(k),
// F_k = y_first(k)) before the reduced solve, and is finished once s is known: one read of the
// right-hand side for the reduced system and one for the solution.
//
// Tiles with q = 0 (a lone separator) take phi_l = phi_r = y = 0 with the conventions of
// PartitionPiece below. The reduced system is factorised without pivoting: it is diagonally
// dominant as A is (a Schur complement of an M-matrix).
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

// The interior of a tile: q unknowns (0 <= q < tile).
struct PartitionPiece {
  std::int64_t q = 0;
  std::vector<double> inv, upper;      // A_q's Thomas factors (TridiagFactors: lower = -h)
  std::vector<double> phi_l, phi_r;    // h A_q^{-1} e_1, h A_q^{-1} e_q
  std::vector<double> w_first, w_last; // rows 0 and q - 1 of A_q^{-1}
  // x at the first and last interior position in terms of the neighbouring separators (first:
  // x = y_first + pl_first s_left + pr_first s_right). q = 0: the neighbours are the separators
  // themselves (first = s_right, last = s_left).
  double pl_first = 0.0, pr_first = 1.0, pl_last = 1.0, pr_last = 0.0;
};

class PartitionedTridiag {
public:
  PartitionedTridiag() = default;
  // Throws InputError unless n >= 3 tiles' worth (n > 2 * tile) and tile >= 2, or when a pivot
  // of the reduced system is not finite.
  PartitionedTridiag(double h, std::int64_t n, std::int64_t tile, bool periodic);

  std::int64_t n() const noexcept { return n_; }
  std::int64_t tile() const noexcept { return tile_; }
  std::int64_t tiles() const noexcept { return tiles_; }
  bool periodic() const noexcept { return periodic_; }
  double h() const noexcept { return h_; }
  const PartitionPiece& full() const noexcept { return full_; }
  const PartitionPiece& last() const noexcept { return last_; }
  const PartitionPiece& piece(std::int64_t k) const noexcept {
    return k == tiles_ - 1 ? last_ : full_;
  }

  // The reduced system's factorisation (K values each): forward y_k = (r_k - sub_k y_{k-1}) inv_k,
  // backward x_k = y_k - cp_k x_{k+1}; periodic: x -= ((x_0 + corner x_{K-1}) invc) z.
  const std::vector<double>& sub() const noexcept { return sub_; }
  const std::vector<double>& inv() const noexcept { return inv_; }
  const std::vector<double>& cp() const noexcept { return cp_; }
  const std::vector<double>& z() const noexcept { return z_; } // zeros unless periodic
  double corner() const noexcept { return corner_; }
  double inv_correction() const noexcept { return invc_; }

  // Reference: solves A x = d for one line (x[i * stride] holds d, boundary terms included) by
  // the partition method, in place.
  void solve(double* x, std::int64_t stride) const;

private:
  double h_ = 0.0;
  std::int64_t n_ = 0, tile_ = 0, tiles_ = 0;
  bool periodic_ = false;
  PartitionPiece full_, last_;
  std::vector<double> sub_, inv_, cp_, z_;
  double corner_ = 0.0, invc_ = 0.0;
};

} // namespace tessera
