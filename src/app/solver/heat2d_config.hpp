// The settings of a heat2d problem (u_t = alpha (u_xx + u_yy) on [0, lx] x [0, ly]) and its
// grid: where the unknowns sit for each kind of boundary.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "mpi/transpose_plan.hpp"

namespace tessera::heat2d {

enum class Boundary { Dirichlet, Periodic };
std::string_view boundary_name(Boundary b) noexcept;
// "dirichlet" or "periodic"; throws InputError otherwise.
Boundary parse_boundary(std::string_view s);

// How the x-lines, split over the ranks in the state's layout, are solved on several ranks.
//   Transpose    the field is transposed so that every x-line lies on one rank, solved by Thomas,
//                and transposed back: the same bits on any rank count.
//   Distributed  the x-lines are solved where they lie by a reduced system
//                (mpi/distributed_tridiag.hpp): no transposes, 2 values per line and rank cross
//                ranks, and the bits depend on the rank count (they agree to rounding).
// One rank needs neither (both give the one-rank bits). Both run on the CUDA backend too, with the
// CPU's bits for the same setting and rank count.
enum class LineSolve { Transpose, Distributed };
std::string_view line_solve_name(LineSolve l) noexcept;
// "transpose" or "distributed"; throws InputError otherwise.
LineSolve parse_line_solve(std::string_view s);

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
  LineSolve line_solve = LineSolve::Transpose;
};

// The settings that are out of range, each named by its deck key (grid.nx, time.dt, …) with
// what was expected; empty when every setting is fine. Besides the range of each setting
// (positive finite lengths, diffusivity and time step; at least one unknown per direction; a
// finite boundary value):
//   - each rank must own at least one grid line in both layouts (nx >= nranks, ny >= nranks);
//   - the implicit line systems (1 + 2r) u_i - r (u_{i-1} + u_{i+1}) = … with
//     r = alpha dt / (2 h^2) for the grid spacing h must be representable: h^2 a positive finite
//     double (roughly 1.5e-154 < h < 1.3e154) and r^2 finite (r < about 1.3e154: the periodic
//     elimination forms r^2, and the explicit halves scale the field by up to 1 + 4r). Outside
//     that the elimination divides by an infinity or a zero.
struct Invalid {
  std::string key;
  std::string message;
};
std::vector<Invalid> find_invalid(const Config& c, int nranks);
// Throws InputError "key: message" (all of them, separated by "; ") when a setting is invalid.
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
