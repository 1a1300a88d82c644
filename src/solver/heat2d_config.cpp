// Boundary names, validation of heat2d settings and grid coordinates.
#include "solver/heat2d_config.hpp"

#include <cmath>

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

std::optional<Invalid> find_invalid(const Config& c, int nranks) {
  auto bad = [](const char* key, std::string message) {
    return std::optional<Invalid>(Invalid{key, std::move(message)});
  };
  if (c.nx <= 0)
    return bad("grid.nx", fmt::format("must be positive, got {}", c.nx));
  if (c.ny <= 0)
    return bad("grid.ny", fmt::format("must be positive, got {}", c.ny));
  // Layout X splits the ny x-lines over the ranks, layout Y the nx y-lines.
  if (c.ny < nranks)
    return bad("grid.ny", fmt::format("{} x-lines leave some of the {} ranks without one: use "
                                      "grid.ny >= {} or fewer ranks",
                                      c.ny, nranks, nranks));
  if (c.nx < nranks)
    return bad("grid.nx", fmt::format("{} y-lines leave some of the {} ranks without one: use "
                                      "grid.nx >= {} or fewer ranks",
                                      c.nx, nranks, nranks));
  if (!(c.lx > 0) || !std::isfinite(c.lx))
    return bad("grid.lx", fmt::format("must be a positive length, got {}", c.lx));
  if (!(c.ly > 0) || !std::isfinite(c.ly))
    return bad("grid.ly", fmt::format("must be a positive length, got {}", c.ly));
  if (!(c.alpha >= 0) || !std::isfinite(c.alpha))
    return bad("physics.alpha", fmt::format("must be a non-negative diffusivity, got {}", c.alpha));
  if (!(c.dt > 0) || !std::isfinite(c.dt))
    return bad("time.dt", fmt::format("must be positive, got {}", c.dt));
  if (!std::isfinite(c.boundary_value))
    return bad("boundary.value", fmt::format("must be finite, got {}", c.boundary_value));
  return std::nullopt;
}

void validate(const Config& c, int nranks) {
  if (const auto bad = find_invalid(c, nranks))
    TESSERA_THROW(InputError, "{}: {}", bad->key, bad->message);
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
