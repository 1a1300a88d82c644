// The distributed tridiagonal solve by a reduced system (see distributed_tridiag.hpp).
#include "mpi/distributed_tridiag.hpp"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "core/aligned_part.hpp"
#include "core/check.hpp"
#include "core/throw.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"

namespace tessera {

namespace {

// Lines one thread takes at a time for the reduced system, and for the local sweeps of narrow
// blocks: a panel of every local point stays in cache between the sweeps.
constexpr std::int64_t kPanel = 64;

// What each rank tells the others at construction: its point count, whether its interior
// factorised, and its reduced rows (sub, diag, sup) for f and l.
constexpr int kInfo = 8;

bool finite_all(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

template <class Body>
void for_panels(std::int64_t lines, Body&& body) {
  const std::int64_t tasks = (lines + kPanel - 1) / kPanel;
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t first = t * kPanel;
    body(first, std::min(kPanel, lines - first));
  }
}

// The local sweeps and the back substitution of wide blocks: one range of lines per thread, on
// multiples of 8 lines (whole cache lines when the rows are aligned), swept point by point.
// Panels of 64 lines would put the 512-byte pieces of a panel's points a row stride apart, and
// at power-of-two strides those share a few cache sets: measured slower than streaming whole
// ranges through the cache (as AdiLine::solve_columns does on one rank).
template <class Body>
void for_thread_ranges(std::int64_t lines, Body&& body) {
  if (lines < kPanel) {
    for_panels(lines, body);
    return;
  }
#pragma omp parallel
  {
    const IndexRange r = aligned_part(lines, 8, omp_get_thread_num(), omp_get_num_threads());
    if (r.size() > 0)
      body(r.first, r.size());
  }
}

} // namespace

DistributedTridiag::DistributedTridiag(MPI_Comm comm, std::span<const double> a,
                                       std::span<const double> b, std::span<const double> c,
                                       std::int64_t lines, bool periodic)
    : comm_(comm), L_(static_cast<std::int64_t>(b.size())), lines_(lines), a_(a.begin(), a.end()),
      c_(c.begin(), c.end()) {
  // The arguments are checked on every rank together (a rank that threw alone would leave the
  // others in the allgather below).
  mpi::collectively(comm, [&] {
    TESSERA_REQUIRE(a.size() == b.size() && c.size() == b.size(), InputError,
                    "distributed tridiagonal solve: {} sub-diagonal, {} diagonal and {} "
                    "super-diagonal values; expected the same number",
                    a.size(), b.size(), c.size());
    TESSERA_REQUIRE(lines >= 0 && 2 * lines <= INT_MAX, InputError,
                    "distributed tridiagonal solve: {} lines; expected 0 to {}", lines,
                    INT_MAX / 2);
  });
  const int P = mpi::comm_size(comm);
  const auto uL = static_cast<std::size_t>(L_);
  // The interior rows 1 … L-2: Thomas factors, and the responses p (to f, through a_1) and q (to
  // l, through c_{L-2}).
  inv_.assign(uL, 0.0);
  cp_.assign(uL, 0.0);
  p_.assign(uL, 0.0);
  q_.assign(uL, 0.0);
  double info[kInfo] = {static_cast<double>(L_), 1.0, 0, 0, 0, 0, 0, 0};
  if (L_ >= 3) {
    const std::size_t lo = 1, hi = uL - 2;
    inv_[lo] = 1.0 / b[lo];
    cp_[lo] = c[lo] * inv_[lo];
    for (std::size_t m = lo + 1; m <= hi; ++m) {
      inv_[m] = 1.0 / (b[m] - a[m] * cp_[m - 1]);
      cp_[m] = c[m] * inv_[m];
    }
    p_[lo] = -a[lo] * inv_[lo];
    q_[lo] = lo == hi ? -c[hi] * inv_[lo] : 0.0;
    for (std::size_t m = lo + 1; m <= hi; ++m) {
      p_[m] = (0.0 - a[m] * p_[m - 1]) * inv_[m];
      q_[m] = ((m == hi ? -c[hi] : 0.0) - a[m] * q_[m - 1]) * inv_[m];
    }
    for (std::size_t m = hi; m-- > lo;) {
      p_[m] = p_[m] - cp_[m] * p_[m + 1];
      q_[m] = q_[m] - cp_[m] * q_[m + 1];
    }
    info[1] = finite_all(inv_) && finite_all(p_) && finite_all(q_) ? 1.0 : 0.0;
    // f: a_0 l_prev + (b_0 + c_0 p_1) f + c_0 q_1 l = d_0 - c_0 y_1
    info[2] = a[0];
    info[3] = b[0] + c[0] * p_[1];
    info[4] = c[0] * q_[1];
    // l: a_{L-1} p_{L-2} f + (b_{L-1} + a_{L-1} q_{L-2}) l + c_{L-1} f_next = d_{L-1} - a y_{L-2}
    info[5] = a[uL - 1] * p_[uL - 2];
    info[6] = b[uL - 1] + a[uL - 1] * q_[uL - 2];
    info[7] = c[uL - 1];
  } else if (L_ >= 1) {
    info[2] = a[0];
    info[3] = b[0];
    info[4] = c[0];
    if (L_ == 2) {
      info[5] = a[1];
      info[6] = b[1];
      info[7] = c[1];
    }
  }
  std::vector<double> all(static_cast<std::size_t>(kInfo * P));
  CHECK_MPI(MPI_Allgather(info, kInfo, MPI_DOUBLE, all.data(), kInfo, MPI_DOUBLE, comm));

  // The reduced system: each rank's min(L, 2) rows in rank order.
  std::vector<double> A, B, C;
  int bad_rank = -1;
  const int me = mpi::comm_rank(comm);
  for (int r = 0; r < P; ++r) {
    const double* in = all.data() + kInfo * r;
    const auto Lr = static_cast<std::int64_t>(in[0]);
    if (in[1] == 0.0 && bad_rank < 0)
      bad_rank = r;
    if (r == me)
      k_first_ = static_cast<std::int64_t>(B.size());
    for (std::int64_t slot = 0; slot < std::min<std::int64_t>(Lr, 2); ++slot) {
      A.push_back(in[2 + 3 * slot]);
      B.push_back(in[3 + 3 * slot]);
      C.push_back(in[4 + 3 * slot]);
      src_.push_back((2 * r + slot) * lines);
    }
  }
  TESSERA_REQUIRE(bad_rank < 0, InputError,
                  "distributed tridiagonal solve: the rows of rank {} are singular for elimination "
                  "without pivoting",
                  bad_rank);
  M_ = static_cast<std::int64_t>(B.size());
  const auto uM = static_cast<std::size_t>(M_);
  if (L_ > 0 && M_ > 0) {
    const std::int64_t mine = std::min<std::int64_t>(L_, 2);
    k_before_ = k_first_ > 0 ? k_first_ - 1 : (periodic ? M_ - 1 : -1);
    k_after_ = k_first_ + mine < M_ ? k_first_ + mine : (periodic ? 0 : -1);
  }
  // Factorise it (cpu/tridiag.hpp's conventions for cyclic systems of 1 and 2 unknowns).
  rsub_.assign(uM, 0.0);
  rinv_.assign(uM, 0.0);
  rcp_.assign(uM, 0.0);
  rz_.assign(uM, 0.0);
  if (M_ > 0) {
    std::vector<double> bb = B, sup = C;
    for (std::size_t k = 1; k < uM; ++k)
      rsub_[k] = A[k];
    cyclic_ = periodic && M_ >= 3;
    double beta = 0.0, alpha = 0.0, gamma = 0.0;
    if (periodic && M_ == 1) {
      bb[0] = A[0] + B[0] + C[0];
    } else if (periodic && M_ == 2) {
      sup[0] = A[0] + C[0];
      rsub_[1] = A[1] + C[1];
    } else if (cyclic_) {
      beta = A[0];
      alpha = C[uM - 1];
      gamma = -B[0];
      bb[0] = B[0] - gamma;
      bb[uM - 1] = B[uM - 1] - alpha * beta / gamma;
    }
    rinv_[0] = 1.0 / bb[0];
    rcp_[0] = sup[0] * rinv_[0];
    for (std::size_t k = 1; k < uM; ++k) {
      rinv_[k] = 1.0 / (bb[k] - rsub_[k] * rcp_[k - 1]);
      rcp_[k] = sup[k] * rinv_[k];
    }
    bool ok = finite_all(rinv_);
    if (cyclic_) {
      rz_[0] = gamma * rinv_[0];
      for (std::size_t k = 1; k < uM; ++k)
        rz_[k] = ((k + 1 == uM ? alpha : 0.0) - rsub_[k] * rz_[k - 1]) * rinv_[k];
      for (std::size_t k = uM - 1; k-- > 0;)
        rz_[k] = rz_[k] - rcp_[k] * rz_[k + 1];
      corner_ = beta / gamma;
      invc_ = 1.0 / (1.0 + rz_[0] + corner_ * rz_[uM - 1]);
      ok = ok && std::isfinite(invc_);
    }
    // Every rank factorised the same gathered rows: they agree.
    TESSERA_REQUIRE(ok, InputError,
                    "distributed tridiagonal solve: the reduced system ({} unknowns over {} "
                    "ranks) is singular",
                    M_, P);
  }
  send_.assign(static_cast<std::size_t>(2 * lines), 0.0);
  gathered_.assign(static_cast<std::size_t>(2 * lines) * static_cast<std::size_t>(P), 0.0);
  reduced_.assign(uM * static_cast<std::size_t>(lines), 0.0);
}

void DistributedTridiag::local_sweeps(double* x, std::int64_t first, std::int64_t count) {
  const std::int64_t n = lines_, L = L_, end = first + count;
  double* rf = send_.data();
  double* rl = send_.data() + n;
  if (L >= 3) {
    // y on the interior rows, in place.
    for (std::int64_t s = first; s < end; ++s)
      x[n + s] = x[n + s] * inv_[1];
    for (std::int64_t m = 2; m <= L - 2; ++m) {
      const double am = a_[static_cast<std::size_t>(m)], im = inv_[static_cast<std::size_t>(m)];
      double* xm = x + m * n;
      const double* xp = xm - n;
      for (std::int64_t s = first; s < end; ++s)
        xm[s] = (xm[s] - am * xp[s]) * im;
    }
    for (std::int64_t m = L - 3; m >= 1; --m) {
      const double cm = cp_[static_cast<std::size_t>(m)];
      double* xm = x + m * n;
      const double* xn = xm + n;
      for (std::int64_t s = first; s < end; ++s)
        xm[s] = xm[s] - cm * xn[s];
    }
    const double c0 = c_[0], al = a_[static_cast<std::size_t>(L - 1)];
    const double* y1 = x + n;
    const double* yl = x + (L - 2) * n;
    const double* d0 = x;
    const double* dl = x + (L - 1) * n;
    for (std::int64_t s = first; s < end; ++s) {
      rf[s] = d0[s] - c0 * y1[s];
      rl[s] = dl[s] - al * yl[s];
    }
  } else if (L >= 1) {
    std::copy(x + first, x + end, rf + first);
    if (L == 2)
      std::copy(x + n + first, x + n + end, rl + first);
  }
}

void DistributedTridiag::reduced_solve(std::int64_t first, std::int64_t count) {
  const std::int64_t n = lines_, M = M_, end = first + count;
  double* y = reduced_.data();
  for (std::int64_t k = 0; k < M; ++k) {
    const double* r = gathered_.data() + src_[static_cast<std::size_t>(k)];
    double* yk = y + k * n;
    const double iv = rinv_[static_cast<std::size_t>(k)];
    if (k == 0) {
      for (std::int64_t s = first; s < end; ++s)
        yk[s] = r[s] * iv;
      continue;
    }
    const double sb = rsub_[static_cast<std::size_t>(k)];
    const double* yp = yk - n;
    for (std::int64_t s = first; s < end; ++s)
      yk[s] = (r[s] - sb * yp[s]) * iv;
  }
  for (std::int64_t k = M - 2; k >= 0; --k) {
    const double cp = rcp_[static_cast<std::size_t>(k)];
    double* yk = y + k * n;
    const double* yn = yk + n;
    for (std::int64_t s = first; s < end; ++s)
      yk[s] = yk[s] - cp * yn[s];
  }
  if (!cyclic_)
    return;
  const double* y0 = y;
  const double* ye = y + (M - 1) * n;
  double fac[kPanel];
  for (std::int64_t s = first; s < end; ++s)
    fac[s - first] = (y0[s] + corner_ * ye[s]) * invc_;
  for (std::int64_t k = 0; k < M; ++k) {
    const double z = rz_[static_cast<std::size_t>(k)];
    double* yk = y + k * n;
    for (std::int64_t s = first; s < end; ++s)
      yk[s] = yk[s] - fac[s - first] * z;
  }
}

void DistributedTridiag::back_substitute(double* x, std::int64_t first, std::int64_t count,
                                         const RowDone& done) const {
  const std::int64_t n = lines_, L = L_, end = first + count;
  if (L == 0)
    return;
  const double* f = row(k_first_);
  std::copy(f + first, f + end, x + first);
  if (L == 1) {
    if (done)
      done(0, first, count);
    return;
  }
  const double* l = row(k_first_ + 1);
  std::copy(l + first, l + end, x + (L - 1) * n + first);
  for (std::int64_t m = 1; m <= L - 2; ++m) {
    const double pm = p_[static_cast<std::size_t>(m)], qm = q_[static_cast<std::size_t>(m)];
    double* xm = x + m * n;
    for (std::int64_t s = first; s < end; ++s)
      xm[s] = (xm[s] + f[s] * pm) + l[s] * qm;
    if (done)
      done(m - 1, first, count); // rows m - 2, m - 1 and m are final
  }
  if (done) {
    done(L - 2, first, count);
    done(L - 1, first, count);
  }
}

void DistributedTridiag::prepare(double* x) {
  for_thread_ranges(lines_,
                    [&](std::int64_t first, std::int64_t count) { local_sweeps(x, first, count); });
}

void DistributedTridiag::exchange() {
  const int count = static_cast<int>(2 * lines_);
  CHECK_MPI(
      MPI_Allgather(send_.data(), count, MPI_DOUBLE, gathered_.data(), count, MPI_DOUBLE, comm_));
}

void DistributedTridiag::reduce() {
  for_panels(lines_, [&](std::int64_t first, std::int64_t count) { reduced_solve(first, count); });
}

void DistributedTridiag::finish(double* x, const RowDone& done) {
  reduce();
  for_thread_ranges(lines_, [&](std::int64_t first, std::int64_t count) {
    back_substitute(x, first, count, done);
  });
}

} // namespace tessera
