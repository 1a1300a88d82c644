// Tridiagonal systems whose unknowns are split over the ranks of a communicator, solved by
// exchanging a reduced system only (the partition method of PaScaL_TDMA and of the one-GPU heat2d
// tiles, with one tile per rank).
//
// Many systems ("lines") share one matrix; rank r holds the contiguous points
// [first_r, first_r + L_r) of every line (L_r may be 0). Row i of the matrix is
//     a_i x_{i-1} + b_i x_i + c_i x_{i+1} = d_i
// with a_0 and c_{n-1} ignored unless `periodic` (then the indices wrap, and on 1 or 2 points the
// coefficients of a repeated neighbour add, as in cpu/tridiag.hpp "Equations").
//
// With its first and last points f and l known, a rank's interior (L_r >= 3) is
//     x_m = y_m + f p_m + l q_m        (m = 1 … L_r - 2)
// where y solves the interior rows alone and p, q are fixed (they depend on a, b, c only). The
// first and last rows, with x_1 and x_{L-2} substituted, couple f and l to the neighbouring ranks'
// l and f only: over all ranks, the first and last points of each rank form a tridiagonal system
// (cyclic when periodic) of M = sum_r min(L_r, 2) unknowns per line, whose matrix is factorised
// once. A solve is then, per line:
//   1. the interior sweeps (local), giving two right-hand-side values per rank;
//   2. one MPI_Allgather of those values, 2 doubles per line and rank;
//   3. the reduced system, solved on every rank (M unknowns per line: cheap next to the local
//      work while M is small against the local points);
//   4. the interior from f and l (local).
// The result differs from a serial Thomas solve by rounding (the operations are not Thomas'), and
// depends on how the points are split.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace tessera {

class DistributedTridiag {
public:
  // Collective over comm. a, b, c: this rank's rows of the matrix (L values each, the same L on
  // the three); `lines` systems per solve, the same on every rank. Throws InputError (on every
  // rank) when the arguments do not fit or a pivot of the local or of the reduced elimination
  // is zero or not finite.
  DistributedTridiag(MPI_Comm comm, std::span<const double> a, std::span<const double> b,
                     std::span<const double> c, std::int64_t lines, bool periodic);

  // Collective: solves every line in place. x holds this rank's points, interleaved: point m of
  // line s at x[m * lines + s] (the lines contiguous, as the columns of a row-major block).
  // OpenMP over lines; call it outside a parallel region. The same as prepare(x), exchange(),
  // finish(x), which a caller may time apart (local work, communication).
  void solve(double* x) {
    prepare(x);
    exchange();
    finish(x);
  }
  // Called by finish() for each of this rank's points m, in ascending order, as soon as points
  // m - 1, m and m + 1 of the lines [first, first + count) hold their solution (before() and
  // after() stand for the neighbours outside the rank), from inside an OpenMP parallel region,
  // each thread with its own lines: a caller's use of the solution while it is in cache.
  using RowDone = std::function<void(std::int64_t m, std::int64_t first, std::int64_t count)>;

  void prepare(double* x); // the interior sweeps and the reduced right-hand sides (local)
  void exchange();         // collective: the allgather of the right-hand sides
  // The reduced system and the interior (local); `done`, when given, as above.
  void finish(double* x, const RowDone& done = {});

  // For a caller that runs the local work itself (the GPU solver does it on the device, with the
  // same operations): the interior factors of prepare()'s sweeps and finish()'s back
  // substitution, the right-hand sides that prepare() fills (2 × lines values: the first points',
  // then the last points'), and the reduced solve alone. Then prepare() = the sweeps + filling
  // right_hand_sides(), and finish() = reduce() + the back substitution from first() and last().
  struct Factors {
    std::span<const double> a, c;    // this rank's sub- and super-diagonal (L values)
    std::span<const double> inv, cp; // Thomas factors of the interior rows 1 … L-2 (index m)
    std::span<const double> p, q;    // the interior responses to f and to l
  };
  Factors factors() const noexcept { return {a_, c_, inv_, cp_, p_, q_}; }
  std::span<double> right_hand_sides() noexcept { return send_; }
  // After exchange(): solves the reduced system (OpenMP over lines; outside a parallel region).
  void reduce();
  // After reduce(): the solution at this rank's first and last point (lines values each), or
  // nullptr where this rank holds no point (first) or fewer than two (last).
  const double* first() const noexcept { return L_ >= 1 ? row(k_first_) : nullptr; }
  const double* last() const noexcept { return L_ >= 2 ? row(k_first_ + 1) : nullptr; }

  // After solve(): the solution at the point just before this rank's first point and just after
  // its last one (lines values each, wrapping when periodic), or nullptr where there is no such
  // point (the ends of a non-periodic line) or this rank holds no points.
  const double* before() const noexcept { return k_before_ >= 0 ? row(k_before_) : nullptr; }
  const double* after() const noexcept { return k_after_ >= 0 ? row(k_after_) : nullptr; }

  std::int64_t local_points() const noexcept { return L_; }
  std::int64_t lines() const noexcept { return lines_; }
  // Unknowns per line of the reduced system (over all ranks).
  std::int64_t reduced_size() const noexcept { return M_; }

private:
  const double* row(std::int64_t k) const noexcept {
    return reduced_.data() + static_cast<std::size_t>(k * lines_);
  }
  void local_sweeps(double* x, std::int64_t first, std::int64_t count);
  void reduced_solve(std::int64_t first, std::int64_t count);
  void back_substitute(double* x, std::int64_t first, std::int64_t count,
                       const RowDone& done) const;

  MPI_Comm comm_;
  std::int64_t L_ = 0, lines_ = 0, M_ = 0;
  std::vector<double> a_, c_;     // this rank's sub- and super-diagonal
  std::vector<double> inv_, cp_;  // Thomas factors of the interior rows (index m)
  std::vector<double> p_, q_;     // interior responses to f and l
  std::vector<std::int64_t> src_; // reduced unknown k: its offset in gathered_
  // The reduced system's factors: forward y_k = (r_k - sub_k y_{k-1}) rinv_k, backward
  // y_k -= rcp_k y_{k+1}; cyclic: y -= ((y_0 + corner y_{M-1}) invc) z.
  std::vector<double> rsub_, rinv_, rcp_, rz_;
  bool cyclic_ = false;
  double corner_ = 0.0, invc_ = 0.0;
  std::int64_t k_first_ = 0, k_before_ = -1, k_after_ = -1;
  std::vector<double> send_, gathered_, reduced_;
};

} // namespace tessera
