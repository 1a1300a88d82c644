// The explicit and implicit half-steps of ADI along rows (see adi_line.hpp).
#include "solver/adi_line.hpp"

#include <algorithm>

namespace tessera::heat2d {

namespace {
// Lines one thread takes at a time: the tridiagonal sweeps interleave this many systems, and
// they stay in cache between the solve and the explicit half that follows it.
constexpr std::int64_t kLinesPerTask = 8;
} // namespace

AdiLine::AdiLine(std::int64_t n, double h, Boundary boundary, double boundary_value)
    : n_(n), h_(h), boundary_(boundary), g_(boundary == Boundary::Dirichlet ? boundary_value : 0.0),
      implicit_(-h, 1.0 + 2.0 * h, -h, n, boundary == Boundary::Periodic) {}

void AdiLine::explicit_lines(const double* src, double* dst, std::int64_t first,
                             std::int64_t count) const {
  const std::int64_t n = n_;
  const double h = h_;
  const bool periodic = boundary_ == Boundary::Periodic;
  for (std::int64_t r = first; r < first + count; ++r) {
    const double* u = src + r * n;
    double* v = dst + r * n;
    const double before = periodic ? u[n - 1] : g_; // u_{-1}
    const double after = periodic ? u[0] : g_;      // u_n
    if (n == 1) {
      v[0] = u[0] + h * ((before + after) - 2.0 * u[0]);
      continue;
    }
    v[0] = u[0] + h * ((before + u[1]) - 2.0 * u[0]);
    for (std::int64_t i = 1; i < n - 1; ++i)
      v[i] = u[i] + h * ((u[i - 1] + u[i + 1]) - 2.0 * u[i]);
    v[n - 1] = u[n - 1] + h * ((u[n - 2] + after) - 2.0 * u[n - 1]);
  }
}

void AdiLine::apply_explicit(const double* src, double* dst, std::int64_t rows) const {
  const std::int64_t tasks = (rows + kLinesPerTask - 1) / kLinesPerTask;
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t first = t * kLinesPerTask;
    explicit_lines(src, dst, first, std::min(kLinesPerTask, rows - first));
  }
}

void AdiLine::solve(double* lines, std::int64_t rows, double* explicit_out) const {
  const BatchLayout layout = BatchLayout::rows(n_, rows);
  const bool dirichlet = boundary_ == Boundary::Dirichlet && g_ != 0.0;
  const double hg = h_ * g_;
  const std::int64_t tasks = (rows + kLinesPerTask - 1) / kLinesPerTask;
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t first = t * kLinesPerTask;
    const std::int64_t count = std::min(kLinesPerTask, rows - first);
    if (dirichlet) {
      // The known boundary values of the implicit unknowns move to the right-hand side.
      for (std::int64_t r = first; r < first + count; ++r) {
        lines[r * n_] += hg;
        lines[r * n_ + n_ - 1] += hg;
      }
    }
    implicit_.solve_range(lines, layout, first, count);
    if (explicit_out)
      explicit_lines(lines, explicit_out, first, count);
  }
}

void AdiLine::solve_columns(double* x, std::int64_t lines, double* explicit_out) const {
  // Columns per task: 64 doubles (512 B) of each row, so that the n rows of a panel stay in the
  // core's cache between the sweeps, and the explicit half vectorises along the row.
  constexpr std::int64_t kPanel = 64;
  const std::int64_t n = n_;
  const BatchLayout layout = BatchLayout::interleaved(n, lines);
  const bool dirichlet = boundary_ == Boundary::Dirichlet && g_ != 0.0;
  const bool periodic = boundary_ == Boundary::Periodic;
  const double hg = h_ * g_, h = h_;
  const std::int64_t tasks = (lines + kPanel - 1) / kPanel;
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t first = t * kPanel;
    const std::int64_t count = std::min(kPanel, lines - first);
    if (dirichlet)
      for (std::int64_t s = first; s < first + count; ++s) {
        x[s] += hg;
        x[(n - 1) * lines + s] += hg;
      }
    implicit_.solve_range(x, layout, first, count);
    // explicit_lines, one row of the panel at a time (the same operations per value).
    for (std::int64_t i = 0; i < n; ++i) {
      const double* u = x + i * lines;
      const double* up = i > 0 ? u - lines : (periodic ? x + (n - 1) * lines : nullptr);
      const double* down = i < n - 1 ? u + lines : (periodic ? x : nullptr);
      double* v = explicit_out + i * lines;
      for (std::int64_t s = first; s < first + count; ++s) {
        const double before = up ? up[s] : g_;
        const double after = down ? down[s] : g_;
        v[s] = u[s] + h * ((before + after) - 2.0 * u[s]);
      }
    }
  }
}

} // namespace tessera::heat2d
