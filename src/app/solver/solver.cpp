// The heat2d solver: its shared state and the choice of step engine (see solver.hpp).
#include "solver/solver.hpp"

#include <algorithm>

#include "core/throw.hpp"
#include "mpi/communicator.hpp"

namespace tessera::heat2d {

namespace {

BlockDistribution checked_layout_x(const Config& c, MPI_Comm comm) {
  validate(c, mpi::comm_size(comm));
  TESSERA_REQUIRE(c.backend == Backend::Cpu || c.backend == Backend::Cuda, InputError,
                  "job.backend: the solver needs cpu or cuda (resolve auto first)");
  return BlockDistribution({c.ny, c.nx}, mpi::comm_size(comm));
}

double half_courant(const Config& c, double spacing) {
  return c.alpha * c.dt / (2.0 * spacing * spacing);
}

} // namespace

SolverState::SolverState(const Config& c, MPI_Comm cm, PhaseTimers* t)
    : config(c), comm(cm), rank(mpi::comm_rank(cm)), one_rank(mpi::comm_size(cm) == 1),
      timers(t ? t : &own_timers), dist_x(checked_layout_x(c, cm)), dist_y(dist_x.transposed()),
      local_x(static_cast<std::size_t>(dist_x.local_size(rank))),
      local_y(static_cast<std::size_t>(dist_y.local_size(rank))),
      line_x(c.nx, half_courant(c, dx(c)), c.boundary, c.boundary_value),
      line_y(c.ny, half_courant(c, dy(c)), c.boundary, c.boundary_value),
      to_x(dist_y, DType::f64, cm, c.backend, plan_options()),
      to_y(dist_x, DType::f64, cm, c.backend, plan_options()), u(local_y, 0.0) {}

TransposeOptions SolverState::plan_options() const {
  TransposeOptions o;
  o.algorithm = config.exchange;
  o.timers = timers;
  o.memory = config.backend == Backend::Cuda ? Memory::Device : Memory::Host;
  // The GPU solver keeps its blocks transposed (lines as columns): see solver_cuda.cpp.
  o.column_major = config.backend == Backend::Cuda;
  return o;
}

void SolverState::transpose(TransposePlan& plan, const double* in, double* out, const char* phase) {
  ScopedPhase p(*timers, phase, plan.bytes_moved());
  plan.execute(in, out);
}

Solver::Solver(const Config& config, MPI_Comm comm, PhaseTimers* timers)
    : state_(config, comm, timers) {
  // Plans with the Auto exchange pick their algorithm by a timed trial at the first execute:
  // the engines run it now, so that it is not counted as stepping.
  ScopedPhase p(*state_.timers, "setup: exchange trial");
  SolverState& s = state_;
  if (s.config.line_solve == LineSolve::Distributed && !s.one_rank) {
    // This rank's rows of every x-line's matrix (the points of its block of layout Y).
    const auto rows = static_cast<std::size_t>(s.dist_y.rows(s.rank));
    const double h = s.line_x.h();
    std::vector<double> off(rows, -h), diag(rows, 1.0 + 2.0 * h);
    s.xdist = std::make_unique<DistributedTridiag>(s.comm, off, diag, off, s.config.ny,
                                                   s.config.boundary == Boundary::Periodic);
  }
  engine_ = s.config.backend == Backend::Cuda ? make_cuda_step(s) : make_cpu_step(s);
}

Solver::~Solver() = default;

} // namespace tessera::heat2d
