// Shared by the tests of whole heat2d runs: the settings of a small run that writes snapshots
// and diagnostics, and everything of its output file, read back on every rank.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/h5_array.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_file.hpp"
#include "solver/run.hpp"
#include "test_heat2d_support.hpp"

namespace heat2d_test {

// A 19×14 grid, 23 steps, snapshots every 4 and diagnostics every 3, stop signals handled.
inline tessera::heat2d::RunSettings
base_settings(const std::string& output, tessera::heat2d::Boundary b, const char* initial) {
  tessera::heat2d::RunSettings s;
  s.config.nx = 19;
  s.config.ny = 14;
  s.config.lx = 1.0;
  s.config.ly = 0.7;
  s.config.alpha = 0.5;
  s.config.dt = 2e-3;
  s.config.boundary = b;
  s.config.boundary_value = b == tessera::heat2d::Boundary::Dirichlet ? 0.3 : 0.0;
  s.initial = tessera::heat2d::parse_initial(initial);
  s.steps = 23;
  s.snapshot_every = 4;
  s.diagnostics_every = 3;
  s.output_file = output;
  s.handle_signals = true;
  return s;
}

struct OutputContents {
  std::vector<double> u, x, y, time;
  std::vector<std::int64_t> step, diag_step;
  std::vector<std::vector<double>> diag;
  tessera::io::nd::Dims u_dims;
  long long finished = -1, steps_done = -1;
};

// Everything of an output file, read on every rank (the I/O threads are gone by now).
inline OutputContents read_output(const std::string& path, bool with_error) {
  namespace h5 = tessera::io::nd;
  namespace io = tessera::io;
  OutputContents c;
  const io::H5File f = io::H5File::open_read(path, MPI_COMM_WORLD);
  c.u_dims = h5::dims(f, "/fields/u");
  c.u.resize(c.u_dims[0] * c.u_dims[1] * c.u_dims[2]);
  h5::read(f, "/fields/u", h5::Elem::f64, {{0, 0, 0}, c.u_dims}, c.u.data());
  c.x = h5::read_f64_vector(f, "/grid/x");
  c.y = h5::read_f64_vector(f, "/grid/y");
  c.time = h5::read_f64_vector(f, "/fields/time");
  c.step = h5::read_i64_vector(f, "/fields/step");
  c.diag_step = h5::read_i64_vector(f, "/diagnostics/step");
  std::vector<std::string> names = {"time", "total", "min", "max"};
  if (with_error) {
    names.push_back("l2_error");
    names.push_back("linf_error");
  }
  for (const auto& n : names)
    c.diag.push_back(h5::read_f64_vector(f, "/diagnostics/" + n));
  c.finished = io::read_int_attribute(f, "/", "finished").value_or(-1);
  c.steps_done = io::read_int_attribute(f, "/", "steps_done").value_or(-1);
  return c;
}

} // namespace heat2d_test
