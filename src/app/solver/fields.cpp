// Initial conditions and the exact sine-mode solution of heat2d (see fields.hpp).
#include "solver/fields.hpp"

#include <algorithm>
#include <charconv>
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
    return {InitialKind::Sine, "", "", false, 0, 0.0};
  if (spec == "gaussian")
    return {InitialKind::Gaussian, "", "", false, 0, 0.0};
  // FILE.h5:/path[k] — split at the last ':' followed by '/'; an optional [k] ends it.
  Initial init{InitialKind::File, "", "", false, 0, 0.0};
  std::string_view rest = spec;
  if (!rest.empty() && rest.back() == ']') {
    const std::size_t open = rest.rfind('[');
    // "[k]": the digits between the last '[' and the final ']'.
    const std::string_view digits = open == std::string_view::npos
                                        ? std::string_view()
                                        : rest.substr(open + 1, rest.size() - open - 2);
    std::int64_t k = 0;
    const auto parsed = digits.empty()
                            ? std::from_chars_result{digits.data(), std::errc::invalid_argument}
                            : std::from_chars(digits.data(), digits.data() + digits.size(), k);
    if (parsed.ec != std::errc() || parsed.ptr != digits.data() + digits.size())
      TESSERA_THROW(InputError,
                    "initial.kind: '{}' must end in a whole number in brackets, such as [-1] for "
                    "the last snapshot",
                    spec);
    init.indexed = true;
    init.index = k;
    rest = rest.substr(0, open);
  }
  for (std::size_t p = rest.size(); p-- > 0;) {
    if (rest[p] == ':' && p + 1 < rest.size() && rest[p + 1] == '/' && p > 0) {
      init.file = std::string(rest.substr(0, p));
      init.dataset = std::string(rest.substr(p + 1));
      return init;
    }
  }
  TESSERA_THROW(InputError,
                "initial.kind must be 'sine', 'gaussian' or an HDF5 dataset FILE.h5:/path (or "
                "FILE.h5:/path[k], a snapshot), got '{}'",
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
  return init.file + ":" + init.dataset +
         (init.indexed ? "[" + std::to_string(init.index) + "]" : std::string());
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
