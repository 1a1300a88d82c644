// The factorization of one constant-coefficient tridiagonal matrix (sub-diagonal a, diagonal b,
// super-diagonal c, size n, cyclic or not), shared by every backend: the CPU's batched solves
// (cpu/tridiag.hpp, ConstTridiag), the device copy (cuda/tridiag.hpp) and the partition method's
// tables (core/tridiag_partition.hpp) replay the operation sequence that cpu/tridiag.hpp states,
// on these values, so they give the same bits.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

class TridiagFactors {
public:
  TridiagFactors() = default;
  // Throws InputError when n < 1 or when a pivot is zero or not finite.
  TridiagFactors(double a, double b, double c, std::int64_t n, bool periodic);

  // Serial reference: solves the one system whose element i is x[i * stride], in place, by the
  // exact operation sequence (Sherman–Morrison correction included when cyclic()).
  void solve_line(double* x, std::int64_t stride) const noexcept;

  std::int64_t n() const noexcept { return n_; }
  bool periodic() const noexcept { return periodic_; }
  // True when the Sherman–Morrison correction runs (periodic with n >= 3).
  bool cyclic() const noexcept { return cyclic_; }
  double lower() const noexcept { return lower_; }
  const std::vector<double>& upper() const noexcept { return upper_; }
  const std::vector<double>& inv() const noexcept { return inv_; }
  const std::vector<double>& z() const noexcept { return z_; } // empty unless cyclic()
  double corner() const noexcept { return corner_; }
  double inv_correction() const noexcept { return inv_correction_; }

private:
  // The forward and backward sweeps alone (how z itself is computed).
  void sweep_line(double* x, std::int64_t stride) const noexcept;

  std::int64_t n_ = 0;
  bool periodic_ = false;
  bool cyclic_ = false;
  double lower_ = 0.0;
  std::vector<double> upper_, inv_, z_;
  double corner_ = 0.0, inv_correction_ = 0.0;
};

} // namespace tessera
