// The partition method's tables and its reference solve (see tridiag_partition.hpp).
#include "core/tridiag_partition.hpp"

#include <cmath>

#include "core/throw.hpp"
#include "core/tridiag_factors.hpp"

namespace tessera {

namespace {

PartitionPiece make_piece(double h, std::int64_t q) {
  PartitionPiece p;
  p.q = q;
  if (q == 0)
    return p;
  const TridiagFactors a(-h, 1.0 + 2.0 * h, -h, q, false);
  p.inv = a.inv();
  p.upper = a.upper();
  const auto uq = static_cast<std::size_t>(q);
  p.w_first.assign(uq, 0.0);
  p.w_last.assign(uq, 0.0);
  p.w_first[0] = 1.0;
  p.w_last[uq - 1] = 1.0;
  a.solve_line(p.w_first.data(), 1);
  a.solve_line(p.w_last.data(), 1);
  p.phi_l.resize(uq);
  p.phi_r.resize(uq);
  for (std::size_t j = 0; j < uq; ++j) {
    p.phi_l[j] = h * p.w_first[j];
    p.phi_r[j] = h * p.w_last[j];
  }
  p.pl_first = p.phi_l[0];
  p.pr_first = p.phi_r[0];
  p.pl_last = p.phi_l[uq - 1];
  p.pr_last = p.phi_r[uq - 1];
  return p;
}

} // namespace

PartitionedTridiag::PartitionedTridiag(double h, std::int64_t n, std::int64_t tile, bool periodic)
    : h_(h), n_(n), tile_(tile), tiles_(tile > 0 ? (n + tile - 1) / tile : 0), periodic_(periodic) {
  TESSERA_REQUIRE(tile >= 2 && n > 2 * tile, InputError,
                  "partitioned tridiagonal solve: needs tiles of 2 or more and at least 3 of them, "
                  "got n = {}, tile = {}",
                  n, tile);
  full_ = make_piece(h, tile - 1);
  last_ = make_piece(h, n - (tiles_ - 1) * tile - 1);
  const auto K = static_cast<std::size_t>(tiles_);
  std::vector<double> diag(K), sup(K, 0.0);
  sub_.assign(K, 0.0);
  const double b = 1.0 + 2.0 * h;
  for (std::size_t k = 0; k < K; ++k) {
    const PartitionPiece& own = piece(static_cast<std::int64_t>(k));
    diag[k] = b - h * own.pr_last;
    sub_[k] = -h * own.pl_last;
    if (k + 1 < K || periodic) {
      const PartitionPiece& next = piece(k + 1 < K ? static_cast<std::int64_t>(k) + 1 : 0);
      diag[k] -= h * next.pl_first;
      sup[k] = -h * next.pr_first;
    }
  }
  if (!periodic)
    sub_[0] = 0.0;
  // Sherman–Morrison around Thomas (as TridiagFactors): A = B + u v^T with u = (gamma, 0, …,
  // alpha), v = (1, 0, …, beta / gamma), beta = A[0][K-1], alpha = A[K-1][0].
  const double beta = sub_[0], alpha = sup[K - 1], gamma = -diag[0];
  std::vector<double> bb = diag;
  if (periodic) {
    bb[0] = diag[0] - gamma;
    bb[K - 1] = diag[K - 1] - alpha * beta / gamma;
  }
  inv_.assign(K, 0.0);
  cp_.assign(K, 0.0);
  inv_[0] = 1.0 / bb[0];
  cp_[0] = sup[0] * inv_[0];
  for (std::size_t k = 1; k < K; ++k) {
    inv_[k] = 1.0 / (bb[k] - sub_[k] * cp_[k - 1]);
    cp_[k] = sup[k] * inv_[k];
  }
  z_.assign(K, 0.0);
  bool finite = true;
  for (double v : inv_)
    finite = finite && std::isfinite(v);
  if (periodic) {
    z_[0] = gamma;
    z_[K - 1] = alpha;
    z_[0] = z_[0] * inv_[0];
    for (std::size_t k = 1; k < K; ++k)
      z_[k] = (z_[k] - sub_[k] * z_[k - 1]) * inv_[k];
    for (std::size_t k = K - 1; k-- > 0;)
      z_[k] = z_[k] - cp_[k] * z_[k + 1];
    corner_ = beta / gamma;
    invc_ = 1.0 / (1.0 + z_[0] + corner_ * z_[K - 1]);
    finite = finite && std::isfinite(invc_);
  }
  TESSERA_REQUIRE(
      finite, InputError,
      "partitioned tridiagonal solve: the reduced system (h = {}, n = {}, tile = {}) is "
      "singular",
      h, n, tile);
}

void PartitionedTridiag::solve(double* x, std::int64_t stride) const {
  const std::int64_t K = tiles_;
  auto at = [&](std::int64_t i) -> double& { return x[i * stride]; };
  std::vector<double> y(static_cast<std::size_t>(n_)), P(static_cast<std::size_t>(K)),
      F(static_cast<std::size_t>(K)), s(static_cast<std::size_t>(K));
  for (std::int64_t k = 0; k < K; ++k) {
    const PartitionPiece& p = piece(k);
    const std::int64_t c0 = k * tile_;
    double* yk = y.data() + c0;
    for (std::int64_t j = 0; j < p.q; ++j)
      yk[j] = at(c0 + j);
    if (p.q > 0) {
      const TridiagFactors a(-h_, 1.0 + 2.0 * h_, -h_, p.q, false);
      a.solve_line(yk, 1);
    }
    const double last = p.q > 0 ? yk[p.q - 1] : 0.0;
    P[static_cast<std::size_t>(k)] = at(c0 + p.q) + h_ * last;
    F[static_cast<std::size_t>(k)] = p.q > 0 ? yk[0] : 0.0;
  }
  for (std::int64_t k = 0; k < K; ++k) {
    const auto uk = static_cast<std::size_t>(k);
    const double f = k + 1 < K ? F[uk + 1] : (periodic_ ? F[0] : 0.0);
    const double r = P[uk] + h_ * f;
    s[uk] = k == 0 ? r * inv_[0] : (r - sub_[uk] * s[uk - 1]) * inv_[uk];
  }
  for (std::int64_t k = K - 2; k >= 0; --k) {
    const auto uk = static_cast<std::size_t>(k);
    s[uk] = s[uk] - cp_[uk] * s[uk + 1];
  }
  if (periodic_) {
    const double fac = (s[0] + corner_ * s[static_cast<std::size_t>(K - 1)]) * invc_;
    for (std::size_t k = 0; k < s.size(); ++k)
      s[k] = s[k] - fac * z_[k];
  }
  for (std::int64_t k = 0; k < K; ++k) {
    const PartitionPiece& p = piece(k);
    const std::int64_t c0 = k * tile_;
    const double left = k > 0 ? s[static_cast<std::size_t>(k - 1)]
                              : (periodic_ ? s[static_cast<std::size_t>(K - 1)] : 0.0);
    const double right = s[static_cast<std::size_t>(k)];
    for (std::int64_t j = 0; j < p.q; ++j) {
      const auto uj = static_cast<std::size_t>(j);
      at(c0 + j) = y[static_cast<std::size_t>(c0 + j)] + left * p.phi_l[uj] + right * p.phi_r[uj];
    }
    at(c0 + p.q) = right;
  }
}

} // namespace tessera
