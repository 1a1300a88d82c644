#include "core/tridiag_factors.hpp"

#include <algorithm>
#include <cmath>

#include "core/throw.hpp"

namespace tessera {

TridiagFactors::TridiagFactors(double a, double b, double c, std::int64_t n, bool periodic)
    : n_(n), periodic_(periodic), cyclic_(periodic && n >= 3) {
  TESSERA_REQUIRE(n >= 1, InputError, "tridiagonal system size must be at least 1, got {}", n);
  const auto un = static_cast<std::size_t>(n);
  upper_.assign(un, 0.0);
  inv_.assign(un, 0.0);
  std::vector<double> bb(un, b);
  double super = c;
  lower_ = a;
  if (periodic && n == 1) {
    bb[0] = a + b + c;
    lower_ = super = 0.0;
  } else if (periodic && n == 2) {
    lower_ = super = a + c;
  }
  const double gamma = -b;
  if (cyclic_) {
    bb[0] = b - gamma;
    bb[un - 1] = b - c * a / gamma;
  }
  inv_[0] = 1.0 / bb[0];
  upper_[0] = super * inv_[0];
  for (std::size_t i = 1; i < un; ++i) {
    inv_[i] = 1.0 / (bb[i] - lower_ * upper_[i - 1]);
    upper_[i] = super * inv_[i];
  }
  const bool finite =
      std::all_of(inv_.begin(), inv_.end(), [](double v) { return std::isfinite(v); });
  TESSERA_REQUIRE(finite, InputError,
                  "tridiagonal matrix (sub {}, diagonal {}, super {}, n = {}{}) is singular for "
                  "elimination without pivoting",
                  a, b, c, n, periodic ? ", periodic" : "");
  if (cyclic_) {
    z_.assign(un, 0.0);
    z_[0] = gamma;
    z_[un - 1] = c;
    sweep_line(z_.data(), 1);
    corner_ = a / gamma;
    inv_correction_ = 1.0 / (1.0 + z_[0] + corner_ * z_[un - 1]);
    TESSERA_REQUIRE(std::isfinite(inv_correction_), InputError,
                    "periodic tridiagonal matrix (sub {}, diagonal {}, super {}, n = {}) is "
                    "singular",
                    a, b, c, n);
  }
}

void TridiagFactors::sweep_line(double* x, std::int64_t stride) const noexcept {
  double prev = x[0] * inv_[0];
  x[0] = prev;
  for (std::int64_t i = 1; i < n_; ++i) {
    double& xi = x[i * stride];
    prev = (xi - lower_ * prev) * inv_[static_cast<std::size_t>(i)];
    xi = prev;
  }
  for (std::int64_t i = n_ - 2; i >= 0; --i) {
    double& xi = x[i * stride];
    prev = xi - upper_[static_cast<std::size_t>(i)] * prev;
    xi = prev;
  }
}

void TridiagFactors::solve_line(double* x, std::int64_t stride) const noexcept {
  sweep_line(x, stride);
  if (!cyclic_)
    return;
  const double fac = (x[0] + corner_ * x[(n_ - 1) * stride]) * inv_correction_;
  for (std::int64_t i = 0; i < n_; ++i)
    x[i * stride] = x[i * stride] - fac * z_[static_cast<std::size_t>(i)];
}

} // namespace tessera
