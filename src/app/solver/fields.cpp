// Initial conditions and the exact sine-mode solution of heat2d (see fields.hpp).
#include "solver/fields.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/throw.hpp"

namespace tessera::heat2d {

namespace {

constexpr double pi = std::numbers::pi;

// Waves per side of the sine mode: the first mode that fits the boundary.
double wave(Boundary b) {
  return b == Boundary::Periodic ? 2.0 : 1.0;
}

double offset(const Config& c) {
  return c.boundary == Boundary::Dirichlet ? c.boundary_value : 0.0;
}

std::vector<double> sine_profile(std::int64_t first, std::int64_t count, double length,
                                 std::int64_t n, Boundary b) {
  std::vector<double> s(static_cast<std::size_t>(count));
  const double k = wave(b) * pi / length;
  for (std::int64_t i = 0; i < count; ++i)
    s[static_cast<std::size_t>(i)] = std::sin(k * coordinate(first + i, length, n, b));
  return s;
}

} // namespace

Initial parse_initial(std::string_view spec) {
  if (spec == "sine")
    return {InitialKind::Sine, "", "", 0.0};
  if (spec == "gaussian")
    return {InitialKind::Gaussian, "", "", 0.0};
  // FILE.h5:/path — split at the last ':' followed by '/'.
  for (std::size_t p = spec.size(); p-- > 0;) {
    if (spec[p] == ':' && p + 1 < spec.size() && spec[p + 1] == '/' && p > 0)
      return {InitialKind::File, std::string(spec.substr(0, p)), std::string(spec.substr(p + 1)),
              0.0};
  }
  TESSERA_THROW(InputError,
                "initial.kind must be 'sine', 'gaussian' or an HDF5 dataset FILE.h5:/path, got "
                "'{}'",
                spec);
}

std::string initial_name(const Initial& init) {
  switch (init.kind) {
  case InitialKind::Sine:
    return "sine";
  case InitialKind::Gaussian:
    return "gaussian";
  case InitialKind::File:
    break;
  }
  return init.file + ":" + init.dataset;
}

void fill_initial(const Config& c, const Initial& init, const BlockDistribution& dist_y, int rank,
                  double* u_y) {
  const std::int64_t x0 = dist_y.begin(rank), rows = dist_y.rows(rank), ny = c.ny;
  const double g = offset(c);
  if (init.kind == InitialKind::Sine) {
    const auto sx = sine_profile(x0, rows, c.lx, c.nx, c.boundary);
    const auto sy = sine_profile(0, ny, c.ly, c.ny, c.boundary);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < ny; ++j)
        u_y[r * ny + j] = g + sx[static_cast<std::size_t>(r)] * sy[static_cast<std::size_t>(j)];
    return;
  }
  TESSERA_REQUIRE(init.kind == InitialKind::Gaussian, InternalError,
                  "fill_initial: a dataset initial condition is read, not computed");
  const double w = init.width > 0 ? init.width : 0.1 * std::min(c.lx, c.ly);
  const double inv2w2 = 1.0 / (2.0 * w * w);
  for (std::int64_t r = 0; r < rows; ++r) {
    const double ddx = coordinate(x0 + r, c.lx, c.nx, c.boundary) - 0.5 * c.lx;
    for (std::int64_t j = 0; j < ny; ++j) {
      const double ddy = coordinate(j, c.ly, c.ny, c.boundary) - 0.5 * c.ly;
      u_y[r * ny + j] = g + std::exp(-(ddx * ddx + ddy * ddy) * inv2w2);
    }
  }
}

Exact::Exact(const Config& c, const Initial& init, const BlockDistribution& dist_y, int rank) {
  if (init.kind != InitialKind::Sine)
    return;
  known_ = true;
  const double k = wave(c.boundary) * pi;
  rate_ = c.alpha * k * k * (1.0 / (c.lx * c.lx) + 1.0 / (c.ly * c.ly));
  offset_ = offset(c);
  sx_ = sine_profile(dist_y.begin(rank), dist_y.rows(rank), c.lx, c.nx, c.boundary);
  sy_ = sine_profile(0, c.ny, c.ly, c.ny, c.boundary);
}

void Exact::error(const double* u_y, double t, double* err_y) const {
  const double amp = std::exp(-rate_ * t);
  const auto ny = static_cast<std::int64_t>(sy_.size());
  const auto rows = static_cast<std::int64_t>(sx_.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    const double ax = amp * sx_[static_cast<std::size_t>(r)];
    for (std::int64_t j = 0; j < ny; ++j)
      err_y[r * ny + j] = u_y[r * ny + j] - (offset_ + ax * sy_[static_cast<std::size_t>(j)]);
  }
}

} // namespace tessera::heat2d
