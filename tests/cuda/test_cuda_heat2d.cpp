// The heat2d solver on the GPU against the CPU backend: the same fields, bit for bit (the line
// kernels, the tridiagonal solves and the transposes replay the CPU's operations), for Dirichlet
// and periodic boundaries on awkward shapes, through Solver directly and through a whole run
// (diagnostics, snapshots into the output file, a restart). Ranks skip together without a GPU.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "../mpi/test_heat2d_support.hpp"
#include "cuda_test_util.hpp"
#include "solver/run.hpp"
#include "solver/solver.hpp"

namespace tessera {
namespace {

using heat2d::Boundary;
using heat2d::Config;

Config config(std::int64_t nx, std::int64_t ny, Boundary b, Backend backend) {
  Config c;
  c.nx = nx;
  c.ny = ny;
  c.lx = 1.3;
  c.ly = 0.7;
  c.alpha = 0.9;
  c.dt = 3e-4;
  c.boundary = b;
  c.boundary_value = b == Boundary::Dirichlet ? 0.25 : 0.0;
  c.backend = backend;
  return c;
}

// Bits that differ between a and b, and the largest difference.
struct Diff {
  std::size_t count = 0;
  double max = 0.0;
};
Diff compare(const std::vector<double>& a, const std::vector<double>& b) {
  Diff d;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (std::bit_cast<std::uint64_t>(a[k]) != std::bit_cast<std::uint64_t>(b[k])) {
      ++d.count;
      d.max = std::max(d.max, std::abs(a[k] - b[k]));
    }
  return d;
}

TEST(CudaHeat2d, SolverMatchesCpuBitForBit) {
  TESSERA_REQUIRE_GPU();
  const int rank = heat2d_test::rank_of();
  const std::uint64_t seed = test::fresh_seed();
  for (Boundary b : {Boundary::Dirichlet, Boundary::Periodic})
    for (auto [nx, ny] : {std::pair<std::int64_t, std::int64_t>{37, 29}, {2, 53}, {64, 64}}) {
      SCOPED_TRACE(std::string(heat2d::boundary_name(b)) + " " + std::to_string(nx) + "x" +
                   std::to_string(ny) + " seed " + std::to_string(seed));
      heat2d::Solver cpu(config(nx, ny, b, Backend::Cpu), MPI_COMM_WORLD);
      heat2d::Solver gpu(config(nx, ny, b, Backend::Cuda), MPI_COMM_WORLD);
      // The same random initial state, in layout X.
      const auto& lx = cpu.layout_x();
      std::vector<double> u0(static_cast<std::size_t>(lx.local_size(rank)));
      test::Rng r{seed + static_cast<std::uint64_t>(rank)};
      for (double& v : u0)
        v = r.wide();
      cpu.set_field_x(u0.data());
      gpu.set_field_x(u0.data());
      for (int step = 1; step <= 12; ++step) {
        cpu.step();
        gpu.step();
        if (step % 4 == 0) { // the host views too, mid-run
          const auto a = cpu.field_y(), g = gpu.field_y();
          const Diff d = compare({a.begin(), a.end()}, {g.begin(), g.end()});
          EXPECT_EQ(d.count, 0u) << "layout Y after step " << step << ", max |diff| " << d.max;
        }
      }
      std::vector<double> a(u0.size()), g(u0.size());
      cpu.get_field_x(a.data());
      gpu.get_field_x(g.data());
      const Diff d = compare(a, g);
      EXPECT_EQ(d.count, 0u) << "max |diff| " << d.max;
      // Writing the state through the host view reaches the device.
      for (double& v : gpu.mutable_field_y())
        v = 0.5;
      for (double& v : cpu.mutable_field_y())
        v = 0.5;
      cpu.step();
      gpu.step();
      cpu.get_field_x(a.data());
      gpu.get_field_x(g.data());
      EXPECT_EQ(compare(a, g).count, 0u) << "after mutable_field_y";
    }
}

TEST(CudaHeat2d, RunMatchesCpuWithOutputAndRestart) {
  TESSERA_REQUIRE_GPU();
  heat2d_test::TempDir dir;
  auto settings = [&](Backend backend, const std::string& name) {
    heat2d::RunSettings s;
    s.config = config(48, 40, Boundary::Dirichlet, backend);
    s.initial.kind = heat2d::InitialKind::Sine;
    s.steps = 30;
    s.snapshot_every = 10;
    s.diagnostics_every = 5;
    s.checkpoint_every = 20;
    s.output_file = dir.file(name + ".h5");
    s.handle_signals = false;
    s.keep_final_field = true;
    return s;
  };
  const heat2d::RunResult cpu = heat2d::run(settings(Backend::Cpu, "cpu"), MPI_COMM_WORLD);
  const heat2d::RunResult gpu = heat2d::run(settings(Backend::Cuda, "gpu"), MPI_COMM_WORLD);
  EXPECT_EQ(compare(cpu.final_field_x, gpu.final_field_x).count, 0u);
  EXPECT_EQ(cpu.diagnostics.total, gpu.diagnostics.total);
  EXPECT_EQ(cpu.diagnostics.min, gpu.diagnostics.min);
  EXPECT_EQ(cpu.diagnostics.max, gpu.diagnostics.max);
  EXPECT_EQ(cpu.diagnostics.l2_error, gpu.diagnostics.l2_error);
  // The GPU run continued from its step-20 checkpoint ends where both runs ended.
  heat2d::RunSettings again = settings(Backend::Cuda, "gpu-restart");
  again.restart_file = gpu.checkpoint;
  const heat2d::RunResult restarted = heat2d::run(again, MPI_COMM_WORLD);
  EXPECT_EQ(restarted.start_step, 20);
  EXPECT_EQ(compare(cpu.final_field_x, restarted.final_field_x).count, 0u);
}

} // namespace
} // namespace tessera
