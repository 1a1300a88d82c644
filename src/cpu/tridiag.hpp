// Batched tridiagonal solves (f64, OpenMP over systems): many independent systems of one size n,
// the Thomas algorithm per system, and the cyclic (periodic) variant through Sherman–Morrison.
// The ADI solver (src/app/solver/) uses the constant-coefficient fast path; the CUDA counterpart
// (cuda/tridiag.*) implements the same layout and the same operation sequence, so both backends
// give the same bits (tessera builds with -ffp-contract=off / --fmad=false).
//
// Memory layout: core/batch_layout.hpp. Coefficient arrays of the general solvers (a, b, c)
// use the same layout as the right-hand side. Solutions overwrite the right-hand side in place.
//
// ## Equations
//
// Row i of system s:   a[i] x[i-1] + b[i] x[i] + c[i] x[i+1] = d[i]
//   Dirichlet (non-cyclic): a[0] and c[n-1] are ignored (x[-1] = x[n] = 0).
//   Cyclic: indices wrap, x[-1] = x[n-1] and x[n] = x[0]. For n = 2 both neighbours of a point
//   are the same point, so its coefficients add (row 0: b0 x0 + (a0 + c0) x1); for n = 1 the
//   equation is (a0 + b0 + c0) x0 = d0. This is what a periodic 3-point stencil means on 1 or 2
//   points.
//
// ## Constant coefficients (ConstTridiag): the exact operation sequence
//
// The factorization depends only on (a, b, c, n, cyclic) and is computed once on the host by
// ConstTridiag's constructor; the device copies its arrays. Per system, with d the right-hand
// side (every line is one rounded operation, no fused multiply-add):
//
//   forward:   y[0] = d[0] * inv[0]
//              y[i] = (d[i] - lower * y[i-1]) * inv[i]             i = 1 … n-1
//   backward:  x[n-1] = y[n-1]
//              x[i] = y[i] - upper[i] * x[i+1]                     i = n-2 … 0
//   cyclic (cyclic() true, n >= 3), Sherman–Morrison correction:
//              f = (x[0] + corner * x[n-1]) * inv_correction
//              x[i] = x[i] - f * z[i]                              i = 0 … n-1
//
// where, for the (possibly modified) diagonal bb[i] = b except bb[0] = b - gamma and
// bb[n-1] = b - c*a/gamma with gamma = -b in the cyclic case:
//   inv[0] = 1 / bb[0],  inv[i] = 1 / (bb[i] - lower * upper[i-1])  (i >= 1),  upper[i] = c *
//   inv[i] z solves the modified system for u = (gamma, 0, …, 0, c) by the forward/backward lines
//   above corner = a / gamma, inv_correction = 1 / (1 + z[0] + corner * z[n-1]).
// Periodic n = 1 and n = 2 are plain (non-cyclic) solves of the summed coefficients
// (lower = a + c for n = 2; inv[0] = 1 / (a + b + c) for n = 1).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/batch_layout.hpp"
#include "core/tridiag_factors.hpp"

namespace tessera::cpu {

// General coefficients, one matrix per system (a, b, c laid out as d). d is overwritten with the
// solution. No pivoting: meant for diagonally dominant systems (ADI matrices are). Opens an
// OpenMP parallel region over systems; call it outside one.
void thomas_batched(const double* a, const double* b, const double* c, double* d,
                    const BatchLayout& layout);
// As thomas_batched with wrapping indices (see "Equations"): Sherman–Morrison for n >= 3.
void cyclic_batched(const double* a, const double* b, const double* c, double* d,
                    const BatchLayout& layout);

// One constant-coefficient matrix (sub-diagonal a, diagonal b, super-diagonal c, of size n,
// cyclic or not) factorized once (core/tridiag_factors.hpp), then applied to many right-hand
// sides.
class ConstTridiag : public TridiagFactors {
public:
  ConstTridiag() = default;
  // Throws InputError when n < 1 or when a pivot is zero or not finite.
  ConstTridiag(double a, double b, double c, std::int64_t n, bool periodic)
      : TridiagFactors(a, b, c, n, periodic) {}

  // Solves every system of `layout` (layout.n must equal n()) in place. Opens an OpenMP
  // parallel region over systems; call it outside one.
  void solve(double* x, const BatchLayout& layout) const;
  // Serial: solves systems [first, first + count) of `layout`. For fused kernels that already
  // run inside their own parallel region and split systems themselves.
  void solve_range(double* x, const BatchLayout& layout, std::int64_t first,
                   std::int64_t count) const;

  // Serial: solves systems [first, first + count) of an interleaved batch whose rows lie
  // `row_stride` values apart (element i of system s at x[i * row_stride + s]; first + count <=
  // row_stride), row by row: each pass of the sweeps runs along a row's `count` contiguous
  // values, the inner loop over systems. solve_range on this layout walks down groups of columns
  // instead, touching one cache line per row at a stride that is a power of two at common sizes,
  // so its rows compete for a few cache sets; this streams. The same operations per value as
  // solve_range ("the exact operation sequence" above), so the same bits. Scratch: `count`
  // values when cyclic(). `row_final`, when given, is called with each row's index as soon as
  // the row holds its solution, so that a caller can use the row while it is still in cache:
  // rows n-1, n-2, …, 0 (the backward sweep) unless cyclic(); rows 0, 1, …, n-1 (the
  // correction) when cyclic().
  void solve_columns_streaming(double* x, std::int64_t row_stride, std::int64_t first,
                               std::int64_t count,
                               const std::function<void(std::int64_t)>& row_final = nullptr) const;
};

} // namespace tessera::cpu
