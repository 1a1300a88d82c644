// The heat2d ADI solver: against a plain serial statement of the scheme, the same bits on any
// rank count, second-order convergence to the exact sine-mode solution, conservation of heat
// with periodic boundaries, and validation of the settings.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "solver/diagnostics.hpp"
#include "solver/solver.hpp"
#include "test_heat2d_support.hpp"

namespace {

using namespace tessera::heat2d;
using heat2d_test::rank_of;
using heat2d_test::size_of;

struct Shape2 {
  std::int64_t nx, ny;
};

// Awkward shapes; those with fewer lines than ranks are skipped (their rejection is tested
// separately).
const std::vector<Shape2> kShapes = {{1, 1},   {1, 7}, {7, 1},   {2, 2},  {17, 31},
                                     {31, 17}, {4, 5}, {64, 13}, {13, 97}};

Config random_config(std::mt19937_64& rng, Shape2 s, Boundary b) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Config c;
  c.nx = s.nx;
  c.ny = s.ny;
  c.lx = 0.5 + u(rng);
  c.ly = 0.5 + u(rng);
  c.alpha = 0.1 + u(rng);
  c.dt = 1e-3 * (0.1 + u(rng)); // Courant numbers from about 0.01 to 100
  c.boundary = b;
  c.boundary_value = b == Boundary::Dirichlet ? 2.0 * u(rng) - 1.0 : 0.0;
  return c;
}

// The distributed solver against the serial reference (to rounding), and its fields, bit for
// bit, against the same solver on one rank.
TEST(Heat2dSolver, MatchesSerialReferenceAndIsBitIdenticalOnAnyRankCount) {
  const unsigned seed = heat2d_test::shared_seed();
  std::mt19937_64 rng(seed);
  const int p = size_of();
  const int rank = rank_of();
  for (Boundary b : {Boundary::Dirichlet, Boundary::Periodic}) {
    for (const Shape2 s : kShapes) {
      const Config c = random_config(rng, s, b);
      const unsigned field_seed = static_cast<unsigned>(rng());
      if (s.nx < p || s.ny < p)
        continue;
      const auto u0 = heat2d_test::random_field(s.nx, s.ny, field_seed);
      Solver dist(c, MPI_COMM_WORLD);
      Solver one(c, MPI_COMM_SELF);
      const auto& lx = dist.layout_x();
      dist.set_field_x(u0.data() + lx.begin(rank) * s.nx);
      one.set_field_x(u0.data());
      std::vector<double> ref = u0;
      const int steps = 5;
      for (int k = 0; k < steps; ++k) {
        dist.step();
        one.step();
        heat2d_test::reference_step(c, ref);
      }
      std::vector<double> got(static_cast<std::size_t>(lx.local_size(rank)));
      std::vector<double> all(u0.size());
      dist.get_field_x(got.data());
      one.get_field_x(all.data());
      double scale = 1.0;
      for (double v : ref)
        scale = std::max(scale, std::abs(v));
      for (std::int64_t k = 0; k < lx.local_size(rank); ++k) {
        const auto g = static_cast<std::size_t>(lx.begin(rank) * s.nx + k);
        ASSERT_EQ(got[static_cast<std::size_t>(k)], all[g])
            << "seed " << seed << ", " << boundary_name(b) << " " << s.nx << "x" << s.ny
            << ": element " << g << " differs between 1 and " << p << " ranks";
        ASSERT_NEAR(got[static_cast<std::size_t>(k)], ref[g], 1e-12 * scale)
            << "seed " << seed << ", " << boundary_name(b) << " " << s.nx << "x" << s.ny
            << ": element " << g << " differs from the serial reference";
      }
      EXPECT_EQ(dist.steps_done(), steps);
      EXPECT_EQ(dist.time(), steps * c.dt);
    }
  }
}

// line_solve = distributed: no transposes in a step, and every step's field within 1e-12
// (relative) of the transposed solver's from the same start; on one rank the same bits.
TEST(Heat2dSolver, DistributedLineSolveAgreesWithTheTransposesEveryStep) {
  const unsigned seed = heat2d_test::shared_seed();
  std::mt19937_64 rng(seed);
  const int p = size_of();
  const int rank = rank_of();
  const std::vector<Shape2> shapes = {{1, 1}, {2, 3}, {3, 2}, {7, 5}, {5, 7}, {17, 31}, {64, 13}};
  for (Boundary b : {Boundary::Dirichlet, Boundary::Periodic}) {
    for (const Shape2 s : shapes) {
      Config c = random_config(rng, s, b);
      const unsigned field_seed = static_cast<unsigned>(rng());
      if (s.nx < p || s.ny < p)
        continue;
      const auto u0 = heat2d_test::random_field(s.nx, s.ny, field_seed);
      Solver transposed(c, MPI_COMM_WORLD);
      c.line_solve = LineSolve::Distributed;
      tessera::PhaseTimers timers;
      Solver distributed(c, MPI_COMM_WORLD, &timers);
      const auto& lx = transposed.layout_x();
      const std::size_t local = static_cast<std::size_t>(lx.local_size(rank));
      transposed.set_field_x(u0.data() + lx.begin(rank) * s.nx);
      distributed.set_field_x(u0.data() + lx.begin(rank) * s.nx);
      timers.clear();
      std::vector<double> want(local), got(local);
      for (int k = 1; k <= 6; ++k) {
        transposed.step();
        distributed.step();
        transposed.get_field_x(want.data());
        distributed.get_field_x(got.data());
        double scale = 1.0, err = 0.0;
        for (std::size_t i = 0; i < local; ++i) {
          scale = std::max(scale, std::abs(want[i]));
          err = std::max(err, std::abs(got[i] - want[i]));
        }
        MPI_Allreduce(MPI_IN_PLACE, &scale, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        EXPECT_LE(err, 1e-12 * scale) << "seed " << seed << ", " << boundary_name(b) << " " << s.nx
                                      << "x" << s.ny << ", step " << k << ", " << p << " ranks";
        if (p == 1) {
          ASSERT_EQ(got, want) << "one rank: the distributed setting must keep the bits";
        }
        // Start the next step from the same state, so that each step is compared alone.
        distributed.set_field_x(want.data());
      }
      const auto& phases = timers.phases();
      EXPECT_EQ(phases.count(kTransposePhase), 0u) << "a distributed step transposed";
      EXPECT_EQ(phases.count(kReducedPhase), p > 1 ? 1u : 0u);
    }
  }
}

// Runs the sine case to t_end on the solver alone and returns its final diagnostics.
Diagnostics run_sine(const Config& c, std::int64_t steps, MPI_Comm comm) {
  Solver solver(c, comm);
  const Initial sine = parse_initial("sine");
  fill_initial(c, sine, solver.layout_y(), solver.rank(), solver.mutable_field_y().data());
  DiagnosticsPlan diag(solver, Exact(c, sine, solver.layout_y(), solver.rank()));
  for (std::int64_t k = 0; k < steps; ++k)
    solver.step();
  return diag.compute(solver);
}

// The error of the sine case at a fixed time, for h and dt halved together.
std::vector<double> sine_errors(Boundary b, const std::vector<std::int64_t>& cells) {
  std::vector<double> errors;
  const double t_end = 0.02;
  for (std::size_t k = 0; k < cells.size(); ++k) {
    Config c;
    const std::int64_t n = b == Boundary::Dirichlet ? cells[k] - 1 : cells[k];
    c.nx = n;
    c.ny = n;
    c.lx = 1.0;
    c.ly = 2.0;
    c.alpha = 1.0;
    c.boundary = b;
    const std::int64_t steps = std::int64_t{4} << k;
    c.dt = t_end / static_cast<double>(steps);
    errors.push_back(run_sine(c, steps, MPI_COMM_WORLD).l2_error);
  }
  return errors;
}

void check_second_order(Boundary b) {
  const std::vector<std::int64_t> cells = {16, 32, 64, 128};
  const auto e = sine_errors(b, cells);
  for (std::size_t k = 0; k + 1 < e.size(); ++k) {
    const double order = std::log2(e[k] / e[k + 1]);
    EXPECT_GE(order, 1.8) << boundary_name(b) << ": error " << e[k] << " at " << cells[k]
                          << " cells, " << e[k + 1] << " at " << cells[k + 1];
    EXPECT_LE(order, 2.2) << boundary_name(b) << ": error " << e[k] << " at " << cells[k]
                          << " cells, " << e[k + 1] << " at " << cells[k + 1];
  }
}

TEST(Heat2dSolver, SineCaseConvergesAtSecondOrderDirichlet) {
  check_second_order(Boundary::Dirichlet);
}
TEST(Heat2dSolver, SineCaseConvergesAtSecondOrderPeriodic) {
  check_second_order(Boundary::Periodic);
}

// With periodic boundaries nothing leaves the domain: the total stays put to rounding.
TEST(Heat2dSolver, PeriodicBoundariesConserveTotalHeat) {
  const unsigned seed = heat2d_test::shared_seed();
  std::mt19937_64 rng(seed);
  for (const Shape2 s : {Shape2{33, 20}, Shape2{8, 64}}) {
    if (s.nx < size_of() || s.ny < size_of())
      continue;
    const Config c = random_config(rng, s, Boundary::Periodic);
    auto u0 = heat2d_test::random_field(s.nx, s.ny, static_cast<unsigned>(rng()));
    for (auto& v : u0)
      v += 1.5; // positive, so the total is far from zero
    Solver solver(c, MPI_COMM_WORLD);
    solver.set_field_x(u0.data() + solver.layout_x().begin(rank_of()) * s.nx);
    DiagnosticsPlan diag(solver, Exact{});
    const double total0 = diag.compute(solver).total;
    for (int k = 0; k < 50; ++k) {
      solver.step();
      const double total = diag.compute(solver).total;
      ASSERT_LE(std::abs(total - total0), 1e-12 * std::abs(total0))
          << "seed " << seed << ", " << s.nx << "x" << s.ny << ", step " << k + 1;
    }
  }
}

// Diagnostics on any rank count are those of one rank, bit for bit (canonical sums).
TEST(Heat2dSolver, DiagnosticsAreTheSameOnAnyRankCount) {
  const unsigned seed = heat2d_test::shared_seed();
  std::mt19937_64 rng(seed);
  for (Boundary b : {Boundary::Dirichlet, Boundary::Periodic}) {
    for (const char* name : {"sine", "gaussian"}) {
      const Config c = random_config(rng, {23, 19}, b);
      const Initial init = parse_initial(name);
      Solver all(c, MPI_COMM_WORLD), one(c, MPI_COMM_SELF);
      fill_initial(c, init, all.layout_y(), all.rank(), all.mutable_field_y().data());
      fill_initial(c, init, one.layout_y(), 0, one.mutable_field_y().data());
      DiagnosticsPlan da(all, Exact(c, init, all.layout_y(), all.rank()));
      DiagnosticsPlan d1(one, Exact(c, init, one.layout_y(), 0));
      for (int k = 0; k < 3; ++k) {
        all.step();
        one.step();
        const Diagnostics x = da.compute(all), y = d1.compute(one);
        EXPECT_EQ(x.step, y.step);
        EXPECT_EQ(x.time, y.time);
        EXPECT_EQ(x.total, y.total) << "seed " << seed << ", " << name;
        EXPECT_EQ(x.min, y.min) << "seed " << seed << ", " << name;
        EXPECT_EQ(x.max, y.max) << "seed " << seed << ", " << name;
        if (init.kind == InitialKind::Sine) {
          EXPECT_EQ(x.l2_error, y.l2_error) << "seed " << seed;
          EXPECT_EQ(x.linf_error, y.linf_error) << "seed " << seed;
          EXPECT_GT(x.l2_error, 0.0);
        } else {
          EXPECT_TRUE(std::isnan(x.l2_error));
        }
      }
    }
  }
}

// The sine mode decays at the analytic rate: the error is small against the amplitude.
TEST(Heat2dSolver, SineCaseFollowsTheExactSolution) {
  for (Boundary b : {Boundary::Dirichlet, Boundary::Periodic}) {
    Config c;
    c.nx = c.ny = 63;
    c.dt = 1e-4;
    c.boundary = b;
    c.boundary_value = b == Boundary::Dirichlet ? 3.0 : 0.0;
    const Diagnostics d = run_sine(c, 100, MPI_COMM_WORLD);
    EXPECT_LT(d.linf_error, 1e-3) << boundary_name(b);
    EXPECT_EQ(d.step, 100);
  }
}

TEST(Heat2dSolver, RejectsFewerLinesThanRanks) {
  const int p = size_of();
  Config c;
  c.nx = c.ny = 8;
  c.dt = 1e-3;
  c.ny = p - 1;
  EXPECT_THROW(Solver(c, MPI_COMM_WORLD), tessera::InputError);
}

} // namespace
