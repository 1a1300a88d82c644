// The settings of a heat2d problem (u_t = alpha (u_xx + u_yy) on [0, lx] x [0, ly]) and its
// grid: where the unknowns sit for each kind of boundary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/backend.hpp"
#include "mpi/transpose_plan.hpp"

namespace tessera::heat2d {

enum class Boundary { Dirichlet, Periodic };
std::string_view boundary_name(Boundary b) noexcept;
// "dirichlet" or "periodic"; throws InputError otherwise.
Boundary parse_boundary(std::string_view s);

struct Config {
  std::int64_t nx = 0, ny = 0; // unknowns along x and y
  double lx = 1.0, ly = 1.0;
  double alpha = 1.0; // diffusivity
  double dt = 0.0;
  Boundary boundary = Boundary::Dirichlet;
  double boundary_value = 0.0; // Dirichlet: u on the whole boundary
  // Cpu: the state in host memory, OpenMP line work. Cuda: the state on each rank's GPU, the
  // line work in CUDA kernels, the transposes through the GPU exchange (same bits as Cpu).
  Backend backend = Backend::Cpu;
  // How the transposes cross ranks (Auto: a timed trial at start-up picks one).
  Exchange exchange = Exchange::Auto;
};

// The first setting that is out of range, named by its deck key (grid.nx, time.dt, …), with
// what was expected; nullopt when every setting is fine. Each rank must own at least one grid
// line in both layouts (nx >= nranks and ny >= nranks).
struct Invalid {
  std::string key;
  std::string message;
};
std::optional<Invalid> find_invalid(const Config& c, int nranks);
// Throws InputError "key: message" for the first invalid setting.
void validate(const Config& c, int nranks);

// Grid spacing and coordinates. Dirichlet: the unknowns are the interior points
// x_i = (i + 1) lx / (nx + 1), i = 0 … nx-1 (the boundary values are not unknowns). Periodic:
// x_i = i lx / nx, the point x = lx being the same as x = 0.
double spacing(double length, std::int64_t n, Boundary b) noexcept;
double coordinate(std::int64_t i, double length, std::int64_t n, Boundary b) noexcept;
inline double dx(const Config& c) noexcept {
  return spacing(c.lx, c.nx, c.boundary);
}
inline double dy(const Config& c) noexcept {
  return spacing(c.ly, c.ny, c.boundary);
}

} // namespace tessera::heat2d
