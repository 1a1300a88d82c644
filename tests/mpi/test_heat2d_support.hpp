// Shared helpers of the heat2d tests: a fresh seed and a temporary directory shared by all
// ranks, a plain serial statement of the Peaceman–Rachford step (the reference the distributed
// solver is compared with), and random fields.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../mpi_test_support.hpp"
#include "cpu/tridiag.hpp"
#include "solver/heat2d_config.hpp"

namespace heat2d_test {

using tessera::test::rank_of;
using tessera::test::size_of;

// A seed from std::random_device on rank 0, the same on every rank.
inline unsigned shared_seed() {
  unsigned seed = 0;
  if (rank_of() == 0)
    seed = std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  return seed;
}

// The heat2d tests' temporary directories: tessera-heat2d-XXXXXX.
class TempDir : public tessera::test::TempDir {
public:
  TempDir() : tessera::test::TempDir("heat2d") {}
};

// A random global field u[j][i] (ny x nx, row-major), the same on every rank for one seed.
inline std::vector<double> random_field(std::int64_t nx, std::int64_t ny, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> f(static_cast<std::size_t>(nx * ny));
  for (auto& v : f)
    v = u(rng);
  return f;
}

// One Peaceman–Rachford step on the whole field u[j][i], written as plainly as possible: the
// explicit half in y, tridiagonal solves along x built element by element (general Thomas or
// cyclic solver), the explicit half in x, solves along y in the interleaved layout.
inline void reference_step(const tessera::heat2d::Config& c, std::vector<double>& u) {
  using tessera::heat2d::Boundary;
  const std::int64_t nx = c.nx, ny = c.ny;
  const bool periodic = c.boundary == Boundary::Periodic;
  const double g = periodic ? 0.0 : c.boundary_value;
  const double hx = c.alpha * c.dt / (2 * tessera::heat2d::dx(c) * tessera::heat2d::dx(c));
  const double hy = c.alpha * c.dt / (2 * tessera::heat2d::dy(c) * tessera::heat2d::dy(c));
  auto at = [&](const std::vector<double>& f, std::int64_t j, std::int64_t i) {
    // Outside the grid: the boundary value, or the periodic image.
    if (periodic) {
      i = (i + nx) % nx;
      j = (j + ny) % ny;
    } else if (i < 0 || i >= nx || j < 0 || j >= ny) {
      return g;
    }
    return f[static_cast<std::size_t>(j * nx + i)];
  };
  std::vector<double> v(u.size());
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i)
      v[static_cast<std::size_t>(j * nx + i)] =
          at(u, j, i) + hy * ((at(u, j - 1, i) + at(u, j + 1, i)) - 2.0 * at(u, j, i));
  auto solve = [&](std::vector<double>& d, std::int64_t n, std::int64_t count, double h,
                   bool along_x) {
    const auto layout = along_x ? tessera::BatchLayout::rows(n, count)
                                : tessera::BatchLayout::interleaved(n, count);
    std::vector<double> a(d.size(), -h), b(d.size(), 1.0 + 2.0 * h), cc(d.size(), -h);
    if (!periodic)
      for (std::int64_t s = 0; s < count; ++s) {
        d[static_cast<std::size_t>(s * layout.system_stride)] += h * g;
        d[static_cast<std::size_t>(s * layout.system_stride + (n - 1) * layout.element_stride)] +=
            h * g;
      }
    if (periodic)
      tessera::cpu::cyclic_batched(a.data(), b.data(), cc.data(), d.data(), layout);
    else
      tessera::cpu::thomas_batched(a.data(), b.data(), cc.data(), d.data(), layout);
  };
  solve(v, nx, ny, hx, true);
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i)
      u[static_cast<std::size_t>(j * nx + i)] =
          at(v, j, i) + hx * ((at(v, j, i - 1) + at(v, j, i + 1)) - 2.0 * at(v, j, i));
  solve(u, ny, nx, hy, false);
}

} // namespace heat2d_test
