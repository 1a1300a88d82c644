// The heat2d solver: u_t = alpha (u_xx + u_yy) on [0, lx] × [0, ly], Peaceman–Rachford ADI,
// second order in space and time, distributed over the ranks of a communicator. The fields are
// bit-identical for any number of ranks and threads.
//
//   tessera::Heat2dSettings s;
//   s.nx = 256; s.ny = 128; s.dt = 1e-4;
//   tessera::Heat2dSolver solver(s, MPI_COMM_WORLD);
//   solver.step(100);
//   std::vector<double> u(solver.layout().local_size(rank));
//   solver.read_field(u.data());   // this rank's rows (y lines) of u[ny][nx]
//
// The field is u[j][i], j the y index (rows), i the x index: layout() distributes its ny rows
// of nx values over the ranks. Dirichlet: the unknowns are the interior points
// x_i = (i + 1) lx / (nx + 1); periodic: x_i = i lx / nx. Any MPI thread level suffices.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>

#include <tessera/backend.hpp>
#include <tessera/block_distribution.hpp>
#include <tessera/export.h>

namespace tessera {

enum class Heat2dBoundary { Dirichlet, Periodic };
// Sine: g + sin(pi x / lx) sin(pi y / ly) (Dirichlet; periodic: sin(2 pi x / lx) sin(2 pi y /
// ly)), whose exact solution is known. Gaussian: g + exp(-|p - centre|^2 / (2 w^2)).
enum class Heat2dInitial { Sine, Gaussian };

struct Heat2dSettings {
  std::int64_t nx = 0, ny = 0; // unknowns along x and y (each at least the number of ranks)
  double lx = 1.0, ly = 1.0;
  double alpha = 1.0; // diffusivity
  double dt = 0.0;    // time step (> 0)
  Heat2dBoundary boundary = Heat2dBoundary::Dirichlet;
  double boundary_value = 0.0; // Dirichlet: u on the whole boundary (g)
  Heat2dInitial initial = Heat2dInitial::Sine;
  double width = 0.0; // Gaussian: w (0: one tenth of the shorter side)
  Backend backend = Backend::Cpu;
};

struct Heat2dDiagnostics {
  double total = 0.0; // sum of u dx dy over the unknowns
  double min = 0.0, max = 0.0;
  double l2_error = 0.0;   // sqrt(sum of (u - exact)^2 dx dy); NaN without an exact solution
  double linf_error = 0.0; // max |u - exact|; NaN without an exact solution
};

class TESSERA_API Heat2dSolver {
public:
  // Collective over comm (which must outlive the solver). Throws InputError naming each
  // setting that is out of range. The field starts at the initial condition, time 0.
  Heat2dSolver(const Heat2dSettings& settings, MPI_Comm comm);
  ~Heat2dSolver();
  Heat2dSolver(Heat2dSolver&&) noexcept;
  Heat2dSolver& operator=(Heat2dSolver&&) noexcept;

  // Collective: advances by `steps` time steps.
  void step(std::int64_t steps = 1);
  std::int64_t steps_done() const noexcept;
  double time() const noexcept; // steps_done() * dt

  // The distribution of the field's rows: BlockDistribution({ny, nx}, ranks).
  const BlockDistribution& layout() const noexcept;
  // Collective: this rank's rows of the field, layout().local_size(rank) doubles, row-major.
  void read_field(double* block);
  // Collective: replaces the field by this rank's rows from `block`.
  void write_field(const double* block);
  // Collective: the diagnostics of the field now, the same on every rank.
  Heat2dDiagnostics diagnostics();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tessera
