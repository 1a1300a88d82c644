// Initial conditions and the exact solution of heat2d, evaluated on this rank's part of the
// grid in layout Y (rows = x index, ny values each; see solver.hpp).
//
//   sine      Dirichlet: u0 = g + sin(pi x / lx) sin(pi y / ly), g the boundary value, whose
//             exact solution is g + exp(-alpha pi^2 (1/lx^2 + 1/ly^2) t) sin(pi x/lx) sin(pi y/ly).
//             Periodic: u0 = sin(2 pi x / lx) sin(2 pi y / ly), decaying with
//             exp(-4 alpha pi^2 (1/lx^2 + 1/ly^2) t).
//   gaussian  u0 = g + exp(-((x - lx/2)^2 + (y - ly/2)^2) / (2 w^2)), w the width (periodic:
//             g = 0); no exact solution.
//   FILE.h5:/path  a 2-D f32/f64 dataset of shape [ny, nx] (read by the caller in layout X);
//   FILE.h5:/path[k]  slab k of a 3-D dataset [n, ny, nx] (k < 0 counts from the end: [-1] is
//             the last), such as a snapshot of a heat2d output; the run then starts at that
//             snapshot's time (solver/initial_file.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/block_distribution.hpp"
#include "solver/heat2d_config.hpp"

namespace tessera::heat2d {

enum class InitialKind { Sine, Gaussian, File };

struct Initial {
  InitialKind kind = InitialKind::Sine;
  std::string file;     // File: the HDF5 file
  std::string dataset;  // File: the dataset path in it
  bool indexed = false; // File: a slab [index] of a 3-D dataset
  std::int64_t index = 0;
  double width = 0.0; // Gaussian: w (0: one tenth of the shorter side)
};

// "sine", "gaussian", "FILE.h5:/path" or "FILE.h5:/path[k]"; throws InputError naming initial.kind
// otherwise.
Initial parse_initial(std::string_view spec);
std::string initial_name(const Initial& init);

// Fills this rank's layout-Y block (dist_y.rows(rank) × ny) with an analytic initial condition
// (Sine or Gaussian).
void fill_initial(const Config& c, const Initial& init, const BlockDistribution& dist_y, int rank,
                  double* u_y);

// The exact solution where one is known (the sine case), as amplitude(t) * sx(i) * sy(j) + g.
class Exact {
public:
  Exact() = default;
  Exact(const Config& c, const Initial& init, const BlockDistribution& dist_y, int rank);
  bool known() const noexcept { return known_; }
  // err = u - exact(t) over this rank's layout-Y block.
  void error(const double* u_y, double t, double* err_y) const;

private:
  bool known_ = false;
  double rate_ = 0.0, offset_ = 0.0;
  std::vector<double> sx_; // this rank's x lines
  std::vector<double> sy_; // all of y
};

} // namespace tessera::heat2d
