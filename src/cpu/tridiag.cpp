// Batched tridiagonal solves: general Thomas and cyclic solvers, and the constant-coefficient
// factorization with its grouped per-system sweeps and its row-streaming sweeps of interleaved
// systems (see tridiag.hpp for layout and operations).
#include "cpu/tridiag.hpp"

#include <algorithm>
#include <cmath>

#include "core/throw.hpp"

namespace tessera::cpu {

namespace {

// Systems solved together by one thread: independent recurrences interleaved so the
// latency of each (a multiply-subtract-multiply chain per element) overlaps the others'. Rows a
// power of two apart share cache sets: more than 8 of them at once overflow the L1 ways.
constexpr std::int64_t kGroup = 8;

struct Strided {
  double* p;
  std::int64_t es;
  double& operator[](std::int64_t i) const { return p[i * es]; }
};
struct ConstStrided {
  const double* p;
  std::int64_t es;
  double operator[](std::int64_t i) const { return p[i * es]; }
};

// General Thomas on one system; cp is scratch of n values.
void thomas_one(ConstStrided a, ConstStrided b, ConstStrided c, Strided d, std::int64_t n,
                double* cp) {
  double m = 1.0 / b[0];
  cp[0] = c[0] * m;
  d[0] = d[0] * m;
  for (std::int64_t i = 1; i < n; ++i) {
    m = 1.0 / (b[i] - a[i] * cp[i - 1]);
    cp[i] = c[i] * m;
    d[i] = (d[i] - a[i] * d[i - 1]) * m;
  }
  for (std::int64_t i = n - 2; i >= 0; --i)
    d[i] = d[i] - cp[i] * d[i + 1];
}

// Cyclic system of n >= 3 (Sherman–Morrison, as in Numerical Recipes' cyclic()): scratch holds
// 3n values.
void cyclic_one(ConstStrided a, ConstStrided b, ConstStrided c, Strided d, std::int64_t n,
                double* scratch) {
  double* cp = scratch;
  double* inv = scratch + n;
  double* z = scratch + 2 * n;
  const double beta = a[0];      // A[0][n-1]
  const double alpha = c[n - 1]; // A[n-1][0]
  const double gamma = -b[0];
  auto diag = [&](std::int64_t i) {
    if (i == 0)
      return b[0] - gamma;
    if (i == n - 1)
      return b[n - 1] - alpha * beta / gamma;
    return b[i];
  };
  inv[0] = 1.0 / diag(0);
  cp[0] = c[0] * inv[0];
  for (std::int64_t i = 1; i < n; ++i) {
    inv[i] = 1.0 / (diag(i) - a[i] * cp[i - 1]);
    cp[i] = c[i] * inv[i];
  }
  auto sweep = [&](auto&& x) {
    x[0] = x[0] * inv[0];
    for (std::int64_t i = 1; i < n; ++i)
      x[i] = (x[i] - a[i] * x[i - 1]) * inv[i];
    for (std::int64_t i = n - 2; i >= 0; --i)
      x[i] = x[i] - cp[i] * x[i + 1];
  };
  std::fill(z, z + n, 0.0);
  z[0] = gamma;
  z[n - 1] = alpha;
  sweep(z);
  sweep(d);
  const double f = (d[0] + beta * d[n - 1] / gamma) / (1.0 + z[0] + beta * z[n - 1] / gamma);
  for (std::int64_t i = 0; i < n; ++i)
    d[i] = d[i] - f * z[i];
}

// Cyclic n = 1 or 2: the wrapped coefficients add up (tridiag.hpp, "Equations").
void cyclic_small(ConstStrided a, ConstStrided b, ConstStrided c, Strided d, std::int64_t n) {
  if (n == 1) {
    d[0] = d[0] / (a[0] + b[0] + c[0]);
    return;
  }
  const double up = a[0] + c[0], lo = a[1] + c[1];
  const double m0 = 1.0 / b[0];
  const double cp0 = up * m0;
  const double y0 = d[0] * m0;
  const double y1 = (d[1] - lo * y0) / (b[1] - lo * cp0);
  d[0] = y0 - cp0 * y1;
  d[1] = y1;
}

template <class Solve>
void for_each_system(const BatchLayout& L, std::int64_t scratch_per_system, Solve&& solve) {
  if (L.n <= 0 || L.count <= 0)
    return;
#pragma omp parallel
  {
    std::vector<double> scratch(static_cast<std::size_t>(scratch_per_system * L.n));
#pragma omp for schedule(static)
    for (std::int64_t s = 0; s < L.count; ++s)
      solve(s * L.system_stride, scratch.data());
  }
}

void check_layout(const BatchLayout& L) {
  TESSERA_REQUIRE(L.n >= 0 && L.count >= 0, InputError,
                  "tridiagonal batch: n and count must not be negative, got n = {}, count = {}",
                  L.n, L.count);
}

// The constant-coefficient sweeps of G systems at once (G = 1 for a remainder).
// `correct`: apply the Sherman–Morrison correction (false while z itself is being computed).
template <std::int64_t G>
void const_sweep(const ConstTridiag& f, double* x, std::int64_t ss, std::int64_t es, bool correct) {
  const std::int64_t n = f.n();
  const double lower = f.lower();
  const double* inv = f.inv().data();
  const double* upper = f.upper().data();
  double prev[G];
  for (std::int64_t k = 0; k < G; ++k) {
    prev[k] = x[k * ss] * inv[0];
    x[k * ss] = prev[k];
  }
  for (std::int64_t i = 1; i < n; ++i) {
    double* xi = x + i * es;
    const double m = inv[i];
    for (std::int64_t k = 0; k < G; ++k) {
      prev[k] = (xi[k * ss] - lower * prev[k]) * m;
      xi[k * ss] = prev[k];
    }
  }
  for (std::int64_t i = n - 2; i >= 0; --i) {
    double* xi = x + i * es;
    const double u = upper[i];
    for (std::int64_t k = 0; k < G; ++k) {
      prev[k] = xi[k * ss] - u * prev[k];
      xi[k * ss] = prev[k];
    }
  }
  if (!correct)
    return;
  const double* z = f.z().data();
  const double corner = f.corner(), invc = f.inv_correction();
  double fac[G];
  for (std::int64_t k = 0; k < G; ++k)
    fac[k] = (x[k * ss] + corner * x[(n - 1) * es + k * ss]) * invc;
  for (std::int64_t i = 0; i < n; ++i) {
    double* xi = x + i * es;
    for (std::int64_t k = 0; k < G; ++k)
      xi[k * ss] = xi[k * ss] - fac[k] * z[i];
  }
}

} // namespace

void thomas_batched(const double* a, const double* b, const double* c, double* d,
                    const BatchLayout& L) {
  check_layout(L);
  const std::int64_t es = L.element_stride;
  for_each_system(L, 1, [&](std::int64_t off, double* cp) {
    thomas_one({a + off, es}, {b + off, es}, {c + off, es}, {d + off, es}, L.n, cp);
  });
}

void cyclic_batched(const double* a, const double* b, const double* c, double* d,
                    const BatchLayout& L) {
  check_layout(L);
  const std::int64_t es = L.element_stride;
  for_each_system(L, 3, [&](std::int64_t off, double* scratch) {
    if (L.n <= 2)
      cyclic_small({a + off, es}, {b + off, es}, {c + off, es}, {d + off, es}, L.n);
    else
      cyclic_one({a + off, es}, {b + off, es}, {c + off, es}, {d + off, es}, L.n, scratch);
  });
}

void ConstTridiag::solve_range(double* x, const BatchLayout& L, std::int64_t first,
                               std::int64_t count) const {
  TESSERA_REQUIRE(L.n == n(), InputError,
                  "tridiagonal batch has systems of {} unknowns, the factorization {}", L.n, n());
  const std::int64_t ss = L.system_stride, es = L.element_stride;
  std::int64_t s = first;
  for (; s + kGroup <= first + count; s += kGroup)
    const_sweep<kGroup>(*this, x + s * ss, ss, es, cyclic());
  for (; s < first + count; ++s)
    solve_line(x + s * ss, es);
}

void ConstTridiag::solve_columns_streaming(
    double* x, std::int64_t row_stride, std::int64_t first, std::int64_t count,
    const std::function<void(std::int64_t)>& row_final) const {
  TESSERA_REQUIRE(first >= 0 && count >= 0 && first + count <= row_stride, InputError,
                  "tridiagonal columns [{}, {} + {}) do not fit rows of {} values", first, first,
                  count, row_stride);
  if (count == 0)
    return;
  // Each loop below is one line of the operation sequence, applied to a whole row of systems;
  // the values of a row are independent, so vectorising them changes no rounding.
  const std::int64_t n = this->n();
  double* const base = x + first;
  auto row = [&](std::int64_t i) { return base + i * row_stride; };
  {
    double* __restrict r = row(0);
    const double m = inv()[0];
    for (std::int64_t s = 0; s < count; ++s)
      r[s] = r[s] * m;
  }
  for (std::int64_t i = 1; i < n; ++i) {
    double* __restrict r = row(i);
    const double* __restrict p = row(i - 1);
    const double m = inv()[static_cast<std::size_t>(i)];
    for (std::int64_t s = 0; s < count; ++s)
      r[s] = (r[s] - lower() * p[s]) * m;
  }
  const bool report = static_cast<bool>(row_final);
  if (report && !cyclic())
    row_final(n - 1);
  for (std::int64_t i = n - 2; i >= 0; --i) {
    double* __restrict r = row(i);
    const double* __restrict q = row(i + 1);
    const double u = upper()[static_cast<std::size_t>(i)];
    for (std::int64_t s = 0; s < count; ++s)
      r[s] = r[s] - u * q[s];
    if (report && !cyclic())
      row_final(i);
  }
  if (!cyclic())
    return;
  std::vector<double> fac_store(static_cast<std::size_t>(count));
  double* __restrict fac = fac_store.data();
  {
    const double* r0 = row(0);
    const double* rl = row(n - 1);
    for (std::int64_t s = 0; s < count; ++s)
      fac[s] = (r0[s] + corner() * rl[s]) * inv_correction();
  }
  for (std::int64_t i = 0; i < n; ++i) {
    double* __restrict r = row(i);
    const double zi = z()[static_cast<std::size_t>(i)];
    for (std::int64_t s = 0; s < count; ++s)
      r[s] = r[s] - fac[s] * zi;
    if (report)
      row_final(i);
  }
}

void ConstTridiag::solve(double* x, const BatchLayout& L) const {
  check_layout(L);
  TESSERA_REQUIRE(L.n == n(), InputError,
                  "tridiagonal batch has systems of {} unknowns, the factorization {}", L.n, n());
  const std::int64_t groups = (L.count + kGroup - 1) / kGroup;
#pragma omp parallel for schedule(static)
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::int64_t first = g * kGroup;
    solve_range(x, L, first, std::min(kGroup, L.count - first));
  }
}

} // namespace tessera::cpu
