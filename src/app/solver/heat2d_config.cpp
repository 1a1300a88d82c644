// Boundary names, validation of heat2d settings and grid coordinates.
#include "solver/heat2d_config.hpp"

#include <cmath>
#include <optional>

#include "core/throw.hpp"

namespace tessera::heat2d {

std::string_view boundary_name(Boundary b) noexcept {
  return b == Boundary::Periodic ? "periodic" : "dirichlet";
}

Boundary parse_boundary(std::string_view s) {
  if (s == "dirichlet")
    return Boundary::Dirichlet;
  if (s == "periodic")
    return Boundary::Periodic;
  TESSERA_THROW(InputError, "boundary.kind must be 'dirichlet' or 'periodic', got '{}'", s);
}

std::string_view line_solve_name(LineSolve l) noexcept {
  return l == LineSolve::Distributed ? "distributed" : "transpose";
}

LineSolve parse_line_solve(std::string_view s) {
  if (s == "transpose")
    return LineSolve::Transpose;
  if (s == "distributed")
    return LineSolve::Distributed;
  TESSERA_THROW(InputError, "solver.line_solve must be 'transpose' or 'distributed', got '{}'", s);
}

namespace {

// The grid of one direction (see find_invalid): the spacing's square, and r = alpha dt / (2 h^2)
// when alpha and dt are fine themselves (`with_r`).
std::optional<std::string> line_problem(const Config& c, const char* n_key, std::int64_t n,
                                        double length, const char* dir, bool with_r) {
  const double h = spacing(length, n, c.boundary);
  const std::string grid = fmt::format(
      "{} over {} = {} unknowns gives the grid spacing d{} = {:.3g}", length, n_key, n, dir, h);
  if (!(h * h > 0) || !std::isfinite(h * h))
    return fmt::format("{}, whose square {}: d{} must lie between about 1.5e-154 and 1.3e154", grid,
                       h * h > 0 ? "overflows" : "underflows to 0", dir);
  const double r = c.alpha * c.dt / (2.0 * h * h); // as the solver computes it
  if (with_r && !std::isfinite(r * r))
    return fmt::format("{}, and alpha dt / (2 d{}^2) = {:.3g} is too large for the implicit "
                       "{}-line solves (its square must be a finite double): use a longer domain, "
                       "fewer unknowns, or a smaller time.dt or physics.alpha",
                       grid, dir, r, dir);
  return std::nullopt;
}

} // namespace

std::vector<Invalid> find_invalid(const Config& c, int nranks) {
  std::vector<Invalid> bad;
  const auto add = [&](const char* key, std::string message) {
    bad.push_back({key, std::move(message)});
  };
  if (c.nx <= 0)
    add("grid.nx", fmt::format("must be positive, got {}", c.nx));
  if (c.ny <= 0)
    add("grid.ny", fmt::format("must be positive, got {}", c.ny));
  // Layout X splits the ny x-lines over the ranks, layout Y the nx y-lines.
  if (c.ny > 0 && c.ny < nranks)
    add("grid.ny", fmt::format("{} x-lines leave some of the {} ranks without one: use "
                               "grid.ny >= {} or fewer ranks",
                               c.ny, nranks, nranks));
  if (c.nx > 0 && c.nx < nranks)
    add("grid.nx", fmt::format("{} y-lines leave some of the {} ranks without one: use "
                               "grid.nx >= {} or fewer ranks",
                               c.nx, nranks, nranks));
  const bool lx_ok = c.lx > 0 && std::isfinite(c.lx);
  const bool ly_ok = c.ly > 0 && std::isfinite(c.ly);
  if (!lx_ok)
    add("grid.lx", fmt::format("must be a positive finite length, got {}", c.lx));
  if (!ly_ok)
    add("grid.ly", fmt::format("must be a positive finite length, got {}", c.ly));
  const bool alpha_ok = c.alpha > 0 && std::isfinite(c.alpha);
  const bool dt_ok = c.dt > 0 && std::isfinite(c.dt);
  if (!alpha_ok)
    add("physics.alpha", fmt::format("must be a positive finite diffusivity, got {}", c.alpha));
  if (!dt_ok)
    add("time.dt", fmt::format("must be a positive finite time step, got {}", c.dt));
  if (!std::isfinite(c.boundary_value))
    add("boundary.value", fmt::format("must be finite, got {}", c.boundary_value));
  // The line systems, where their settings are fine one by one.
  const bool with_r = alpha_ok && dt_ok;
  if (lx_ok && c.nx > 0)
    if (auto m = line_problem(c, "grid.nx", c.nx, c.lx, "x", with_r))
      add("grid.lx", std::move(*m));
  if (ly_ok && c.ny > 0)
    if (auto m = line_problem(c, "grid.ny", c.ny, c.ly, "y", with_r))
      add("grid.ly", std::move(*m));
  return bad;
}

void validate(const Config& c, int nranks) {
  const auto bad = find_invalid(c, nranks);
  if (bad.empty())
    return;
  std::string m;
  for (const auto& b : bad)
    m += fmt::format("{}{}: {}", m.empty() ? "" : "; ", b.key, b.message);
  TESSERA_THROW(InputError, "{}", m);
}

double spacing(double length, std::int64_t n, Boundary b) noexcept {
  return b == Boundary::Periodic ? length / static_cast<double>(n)
                                 : length / static_cast<double>(n + 1);
}

double coordinate(std::int64_t i, double length, std::int64_t n, Boundary b) noexcept {
  return b == Boundary::Periodic ? static_cast<double>(i) * length / static_cast<double>(n)
                                 : static_cast<double>(i + 1) * length / static_cast<double>(n + 1);
}

} // namespace tessera::heat2d
