// The heat2d solver on the GPU against the CPU backend: the same fields, bit for bit where the GPU
// runs the transposed line solves (the line kernels, the tridiagonal solves and the transposes
// replay the CPU's operations; small grids, several ranks), to rounding where it steps by tiles
// (one rank, more than 64 points a side), for Dirichlet and periodic boundaries on awkward shapes,
// through the fused column kernels alone, through Solver directly, through the device diagnostics
// and through a whole run (diagnostics, snapshots into the output file, a restart); the tile
// kernels against each other, bit for bit. Ranks skip together without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "../mpi/test_heat2d_support.hpp"
#include "../unit/test_tridiag_support.hpp"
#include "bench/cuda/heat2d_tile_variants.hpp"
#include "cuda/buffer.hpp"
#include "cuda/heat2d.hpp"
#include "cuda/heat2d_tiles.hpp"
#include "cuda/stream.hpp"
#include "cuda/transpose.hpp"
#include "cuda/tridiag.hpp"
#include "cuda_test_util.hpp"
#include "solver/adi_line.hpp"
#include "solver/diagnostics.hpp"
#include "solver/fields.hpp"
#include "solver/run.hpp"
#include "solver/solver.hpp"

namespace tessera {
namespace {

using heat2d::Boundary;
using heat2d::Config;
using tridiag_test::max_rel;
using tridiag_test::transposed;

Config config(std::int64_t nx, std::int64_t ny, Boundary b, Backend backend,
              double boundary_value = 0.25) {
  Config c;
  c.nx = nx;
  c.ny = ny;
  c.lx = 1.3;
  c.ly = 0.7;
  c.alpha = 0.9;
  c.dt = 3e-4;
  c.boundary = b;
  c.boundary_value = b == Boundary::Dirichlet ? boundary_value : 0.0;
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

// Random values for this rank's block of layout X (seeded per rank).
std::vector<double> random_state_x(const heat2d::Solver& s, std::uint64_t seed, int rank) {
  std::vector<double> u(static_cast<std::size_t>(s.layout_x().local_size(rank)));
  test::Rng r{seed + static_cast<std::uint64_t>(rank)};
  for (double& v : u)
    v = r.wide();
  return u;
}

// Both line solves: on several ranks `distributed` solves the x-lines where they lie (the sweeps
// on the device, the reduced system on the host), with the CPU's operations.
TEST(CudaHeat2d, SolverMatchesCpuBitForBit) {
  TESSERA_REQUIRE_GPU();
  const int rank = heat2d_test::rank_of();
  const std::uint64_t seed = test::fresh_seed();
  for (const heat2d::LineSolve ls : {heat2d::LineSolve::Transpose, heat2d::LineSolve::Distributed})
    for (Boundary b : {Boundary::Dirichlet, Boundary::Periodic})
      for (auto [nx, ny] : {std::pair<std::int64_t, std::int64_t>{37, 29},
                            {2, 53},
                            {64, 64},
                            {31, 33},
                            {33, 31},
                            {3, 2},
                            {7, 5}}) {
        SCOPED_TRACE(std::string(heat2d::line_solve_name(ls)) + " " +
                     std::string(heat2d::boundary_name(b)) + " " + std::to_string(nx) + "x" +
                     std::to_string(ny) + " seed " + std::to_string(seed));
        Config cc = config(nx, ny, b, Backend::Cpu), gc = config(nx, ny, b, Backend::Cuda);
        cc.line_solve = gc.line_solve = ls;
        heat2d::Solver cpu(cc, MPI_COMM_WORLD);
        heat2d::Solver gpu(gc, MPI_COMM_WORLD);
        // The same random initial state, in layout X.
        const std::vector<double> u0 = random_state_x(cpu, seed, rank);
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

// Grids of more than two tiles a side: on one rank the GPU steps by tiles (partitioned solves,
// no transposes), within 1e-12 of the CPU after every step; on two ranks by the transposed line
// solves (bit for bit, so within the bound too). Stepping is a function of the state alone: a
// solver given the state after 3 steps ends bit for bit where the continuous one does.
TEST(CudaHeat2d, TiledStepMatchesCpuToRoundingAndRestartsBitForBit) {
  TESSERA_REQUIRE_GPU();
  const int rank = heat2d_test::rank_of();
  const std::uint64_t seed = test::fresh_seed();
  for (Boundary b : {Boundary::Dirichlet, Boundary::Periodic})
    for (auto [nx, ny] : {std::pair<std::int64_t, std::int64_t>{65, 67},
                          {96, 97},
                          {131, 100},
                          {160, 193},
                          {300, 70}}) {
      SCOPED_TRACE(std::string(heat2d::boundary_name(b)) + " " + std::to_string(nx) + "x" +
                   std::to_string(ny) + " seed " + std::to_string(seed));
      Config c = config(nx, ny, b, Backend::Cpu, -0.4);
      c.dt = 2e-3; // half Courant numbers of about 1 … 100
      heat2d::Solver cpu(c, MPI_COMM_WORLD);
      c.backend = Backend::Cuda;
      heat2d::Solver gpu(c, MPI_COMM_WORLD), again(c, MPI_COMM_WORLD);
      const std::vector<double> u0 = random_state_x(cpu, seed, rank);
      cpu.set_field_x(u0.data());
      gpu.set_field_x(u0.data());
      std::vector<double> a(u0.size()), g(u0.size()), mid(u0.size());
      for (int step = 1; step <= 6; ++step) {
        cpu.step();
        gpu.step();
        cpu.get_field_x(a.data());
        gpu.get_field_x(g.data());
        EXPECT_LT(max_rel(g, a), 1e-12) << "after step " << step;
        if (step == 3)
          mid = g;
      }
      again.set_field_x(mid.data());
      for (int step = 4; step <= 6; ++step)
        again.step();
      std::vector<double> re(u0.size());
      again.get_field_x(re.data());
      EXPECT_EQ(compare(re, g).count, 0u) << "restarted from step 3";
      // Through the host view: the same state written back gives the same next step.
      const std::vector<double> y(gpu.field_y().begin(), gpu.field_y().end());
      auto view = again.mutable_field_y();
      std::copy(y.begin(), y.end(), view.begin());
      gpu.step();
      again.step();
      gpu.get_field_x(g.data());
      again.get_field_x(re.data());
      EXPECT_EQ(compare(re, g).count, 0u) << "after mutable_field_y";
    }
}

// The library's tile kernel and the benchmark's comparison kernels
// (bench/cuda/heat2d_tile_variants.hpp) give the same bits: the field after six steps of each
// against the first version, on shapes with short last tiles and more than kAhead tiles a side,
// the Dirichlet value nonzero or periodic, half Courant numbers from 0.01 to 100.
TEST(CudaHeat2d, TileKernelsGiveTheSameBits) {
  TESSERA_REQUIRE_GPU();
  const int first = cuda::bench_ref::heat2d_tile_comparison_count() - 1;
  ASSERT_EQ(cuda::bench_ref::heat2d_tile_comparison_name(first), "first");
  const std::uint64_t seed = test::fresh_seed();
  test::Rng r{seed};
  for (bool periodic : {false, true})
    for (auto [nx, ny] : {std::pair<std::int64_t, std::int64_t>{131, 100},
                          {160, 193},
                          {300, 70},
                          {1100, 97},
                          {96, 613}}) {
      SCOPED_TRACE(std::string(periodic ? "periodic " : "dirichlet ") + std::to_string(nx) + "x" +
                   std::to_string(ny) + " seed " + std::to_string(seed));
      const auto n = static_cast<std::size_t>(nx * ny);
      std::vector<double> u0(n);
      for (double& v : u0)
        v = r.wide();
      const double hx = std::pow(10.0, 2.0 * r.uniform()), hy = std::pow(10.0, 2.0 * r.uniform());
      auto stream = cuda::make_stream();
      CUstream_st* s = stream.get();
      std::vector<double> want;
      // The first version, then the library's kernel (-1), then the other comparison kernels.
      std::vector<int> kernels = {first, -1};
      for (int k = 0; k < first; ++k)
        kernels.push_back(k);
      for (int k : kernels) {
        cuda::TiledHeat2d t(nx, ny, hx, hy, periodic, -0.4);
        if (k >= 0)
          t.set_tile_launcher(cuda::bench_ref::heat2d_tile_comparison(k));
        cuda::DeviceBuffer a(n * sizeof(double)), b(n * sizeof(double));
        cuda::copy(a.data(), u0.data(), n * sizeof(double));
        t.prepare(s, a.as<double>());
        for (int step = 0; step < 6; ++step) {
          t.half(s, a.as<double>());
          t.full(s, a.as<double>(), b.as<double>());
          std::swap(a, b);
        }
        cuda::synchronize(s);
        std::vector<double> got(n);
        cuda::copy(got.data(), a.data(), n * sizeof(double));
        if (k == first)
          want = got;
        else
          EXPECT_EQ(compare(got, want).count, 0u)
              << (k < 0 ? std::string("library") : cuda::bench_ref::heat2d_tile_comparison_name(k));
      }
    }
}

std::vector<double> download(const cuda::DeviceBuffer& b, std::size_t count) {
  std::vector<double> v(count);
  cuda::copy(v.data(), b.data(), count * sizeof(double));
  return v;
}

// The fused column kernels alone against AdiLine on the rows: every boundary kind (Dirichlet
// with a zero and a nonzero value, periodic), short and odd lines, with and without the
// solution stored.
TEST(CudaHeat2d, ColumnKernelsMatchAdiLine) {
  TESSERA_REQUIRE_GPU();
  const std::uint64_t seed = test::fresh_seed();
  test::Rng r{seed};
  struct Case {
    Boundary b;
    double g;
  };
  for (Case k : {Case{Boundary::Dirichlet, 0.0}, Case{Boundary::Dirichlet, -0.75},
                 Case{Boundary::Periodic, 0.0}})
    for (std::int64_t n : {1, 2, 3, 17, 31, 33, 40})
      for (std::int64_t lines : {1, 5, 63, 64, 65, 130}) {
        const bool periodic = k.b == Boundary::Periodic;
        if (periodic && n < 2)
          continue; // the periodic factorization needs two unknowns
        SCOPED_TRACE(std::string(heat2d::boundary_name(k.b)) + " g " + std::to_string(k.g) + " n " +
                     std::to_string(n) + " lines " + std::to_string(lines) + " seed " +
                     std::to_string(seed));
        const heat2d::AdiLine line(n, 0.37, k.b, k.g);
        const auto count = static_cast<std::size_t>(n * lines);
        std::vector<double> rows(count);
        for (double& v : rows)
          v = r.wide();
        if (n > 2)
          rows[1] = -0.0; // signed zeros survive as on the CPU
        std::vector<double> expl(count), solved = rows, solved_expl(count);
        line.apply_explicit(rows.data(), expl.data(), lines);
        line.solve(solved.data(), lines, solved_expl.data());

        const cuda::DeviceTridiag tri(line.implicit_matrix());
        const cuda::unique_stream stream = cuda::make_stream();
        CUstream_st* s = stream.get();
        // The lines as the kernels take them: columns, line s at [i * lines + s].
        const std::vector<double> cols = transposed(rows, lines, n);
        const std::size_t bytes = count * sizeof(double);
        cuda::DeviceBuffer x(bytes), out(bytes);
        cuda::copy(x.data(), cols.data(), bytes);
        cuda::heat2d_explicit_columns(s, x.as<double>(), out.as<double>(), n, lines, line.h(),
                                      periodic, k.g);
        cuda::synchronize(s);
        EXPECT_EQ(compare(download(out, count), transposed(expl, lines, n)).count, 0u)
            << "explicit half";
        for (bool keep : {false, true}) {
          cuda::copy(x.data(), cols.data(), bytes);
          cuda::heat2d_solve_columns(s, tri, x.as<double>(), out.as<double>(), lines, line.h(),
                                     periodic, k.g, keep);
          cuda::synchronize(s);
          EXPECT_EQ(compare(download(out, count), transposed(solved_expl, lines, n)).count, 0u)
              << "explicit half after the solve, keep " << keep;
          if (keep) {
            EXPECT_EQ(compare(download(x, count), transposed(solved, lines, n)).count, 0u)
                << "solution";
          }
        }
      }
}

// The device diagnostics against the CPU's: the reductions of the Sum family give the same
// bits on both backends, and the exact solution is evaluated with the same operations.
TEST(CudaHeat2d, DiagnosticsMatchCpuBitForBit) {
  TESSERA_REQUIRE_GPU();
  const int rank = heat2d_test::rank_of();
  for (Boundary b : {Boundary::Dirichlet, Boundary::Periodic})
    for (auto kind : {heat2d::InitialKind::Sine, heat2d::InitialKind::Gaussian})
      for (auto [nx, ny] : {std::pair<std::int64_t, std::int64_t>{31, 33}, {70, 9}}) {
        SCOPED_TRACE(std::string(heat2d::boundary_name(b)) + " " + std::to_string(nx) + "x" +
                     std::to_string(ny) + (kind == heat2d::InitialKind::Sine ? " sine" : " gauss"));
        heat2d::Initial init;
        init.kind = kind;
        heat2d::Solver cpu(config(nx, ny, b, Backend::Cpu), MPI_COMM_WORLD);
        heat2d::Solver gpu(config(nx, ny, b, Backend::Cuda), MPI_COMM_WORLD);
        heat2d::fill_initial(cpu.config(), init, cpu.layout_y(), rank,
                             cpu.mutable_field_y().data());
        heat2d::fill_initial(gpu.config(), init, gpu.layout_y(), rank,
                             gpu.mutable_field_y().data());
        const heat2d::Exact exact(cpu.config(), init, cpu.layout_y(), rank);
        heat2d::DiagnosticsPlan dc(cpu, exact), dg(gpu, exact);
        for (int step = 0; step <= 6; ++step) {
          if (step % 3 == 0) {
            const heat2d::Diagnostics a = dc.compute(cpu), g = dg.compute(gpu);
            EXPECT_TRUE(test::same_bits(a.total, g.total)) << a.total << " " << g.total;
            EXPECT_TRUE(test::same_bits(a.min, g.min)) << a.min << " " << g.min;
            EXPECT_TRUE(test::same_bits(a.max, g.max)) << a.max << " " << g.max;
            EXPECT_TRUE(test::same_bits(a.l2_error, g.l2_error)) << a.l2_error << " " << g.l2_error;
            EXPECT_TRUE(test::same_bits(a.linf_error, g.linf_error))
                << a.linf_error << " " << g.linf_error;
          }
          cpu.step();
          gpu.step();
        }
      }
}

// The phases of a device step reach the timers with their bytes, once the work is done.
TEST(CudaHeat2d, StepPhasesAreTimedWithBytes) {
  TESSERA_REQUIRE_GPU();
  PhaseTimers timers;
  heat2d::Solver gpu(config(40, 24, Boundary::Periodic, Backend::Cuda), MPI_COMM_WORLD, &timers);
  timers.clear();
  constexpr int kSteps = 5;
  for (int step = 0; step < kSteps; ++step)
    gpu.step();
  (void)gpu.field_y(); // waits for the device and collects the phase times
  const auto& phases = timers.phases();
  double bytes = 0.0;
  for (const char* name : {heat2d::kXLinesPhase, heat2d::kYLinesPhase, heat2d::kTransposePhase}) {
    const auto it = phases.find(name);
    ASSERT_NE(it, phases.end()) << name;
    EXPECT_GT(it->second.bytes, 0.0) << name;
    EXPECT_GE(it->second.seconds, 0.0) << name;
    bytes += it->second.bytes;
  }
  EXPECT_EQ(phases.at(heat2d::kXLinesPhase).calls, kSteps);
  // Every device phase is in bytes_per_step, plus the first step's explicit half in y (16 bytes
  // per value of the rank's state).
  const double first = 16.0 * static_cast<double>(gpu.layout_y().local_size(gpu.rank()));
  EXPECT_DOUBLE_EQ(bytes, kSteps * gpu.bytes_per_step() + first);
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
  EXPECT_EQ(cpu.diagnostics.linf_error, gpu.diagnostics.linf_error);
  // A GPU run of 20 steps (its checkpoint at its last step), extended to 30 from that
  // checkpoint, ends where both runs ended.
  heat2d::RunSettings shorter = settings(Backend::Cuda, "gpu-20");
  shorter.steps = 20;
  const heat2d::RunResult first = heat2d::run(shorter, MPI_COMM_WORLD);
  heat2d::RunSettings again = settings(Backend::Cuda, "gpu-restart");
  again.restart_file = first.checkpoint;
  const heat2d::RunResult restarted = heat2d::run(again, MPI_COMM_WORLD);
  EXPECT_EQ(restarted.start_step, 20);
  EXPECT_EQ(compare(cpu.final_field_x, restarted.final_field_x).count, 0u);
}

} // namespace
} // namespace tessera
