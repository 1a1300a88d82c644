// The ADI step and the layout changes of the heat2d solver (see solver.hpp).
#include "solver/solver.hpp"

#include <algorithm>

#include "core/throw.hpp"
#include "mpi/communicator.hpp"
#include "solver/solver_device.hpp"

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

Solver::Solver(const Config& config, MPI_Comm comm, PhaseTimers* timers)
    : config_(config), comm_(comm), rank_(mpi::comm_rank(comm)),
      one_rank_(mpi::comm_size(comm) == 1), timers_(timers ? timers : &own_timers_),
      dist_x_(checked_layout_x(config, comm)), dist_y_(dist_x_.transposed()),
      local_x_(static_cast<std::size_t>(dist_x_.local_size(rank_))),
      local_y_(static_cast<std::size_t>(dist_y_.local_size(rank_))),
      line_x_(config.nx, half_courant(config, dx(config)), config.boundary, config.boundary_value),
      line_y_(config.ny, half_courant(config, dy(config)), config.boundary, config.boundary_value),
      to_x_(dist_y_, DType::f64, comm, config.backend, plan_options()),
      to_y_(dist_x_, DType::f64, comm, config.backend, plan_options()), u_(local_y_, 0.0) {
  // Plans with the Auto exchange pick their algorithm by a timed trial at the first execute:
  // run it now, so that it is not counted as stepping.
  ScopedPhase p(*timers_, "setup: exchange trial");
  if (config_.line_solve == LineSolve::Distributed && !one_rank_) {
    // This rank's rows of every x-line's matrix (the points of its block of layout Y).
    const auto rows = static_cast<std::size_t>(dist_y_.rows(rank_));
    const double h = line_x_.h();
    std::vector<double> off(rows, -h), diag(rows, 1.0 + 2.0 * h);
    xdist_ = std::make_unique<DistributedTridiag>(comm_, off, diag, off, config_.ny,
                                                  config_.boundary == Boundary::Periodic);
  }
  if (config_.backend == Backend::Cuda) {
    device_init();
    return;
  }
  work_.assign(std::max(local_x_, local_y_), 0.0);
  lines_x_.assign(local_x_, 0.0);
  to_x_.execute(work_.data(), lines_x_.data());
  to_y_.execute(lines_x_.data(), u_.data());
}

TransposeOptions Solver::plan_options() const {
  TransposeOptions o;
  o.algorithm = config_.exchange;
  o.timers = timers_;
  o.memory = config_.backend == Backend::Cuda ? Memory::Device : Memory::Host;
  // The GPU solver keeps its blocks transposed (lines as columns): see solver_cuda.cpp.
  o.column_major = config_.backend == Backend::Cuda;
  return o;
}

std::span<const double> Solver::field_y() const {
  if (dev_ && host_stale_)
    device_download();
  return {u_.data(), local_y_};
}

std::span<double> Solver::mutable_field_y() {
  explicit_ready_ = false;
  if (dev_) {
    if (host_stale_)
      device_download();
    host_newer_ = true;
  }
  return {u_.data(), local_y_};
}

void Solver::transpose(TransposePlan& plan, const double* in, double* out, const char* phase) {
  ScopedPhase p(*timers_, phase, plan.bytes_moved());
  plan.execute(in, out);
}

void Solver::set_field_x(const double* block_x) {
  explicit_ready_ = false;
  if (dev_) {
    device_set_field_x(block_x);
    return;
  }
  transpose(to_y_, block_x, u_.data(), "layout changes");
}

void Solver::get_field_x(double* block_x) {
  if (dev_) {
    device_get_field_x(block_x);
    return;
  }
  transpose(to_x_, u_.data(), block_x, "layout changes");
}

void Solver::step() {
  if (dev_) {
    device_step();
    return;
  }
  const std::int64_t rows_x = dist_x_.rows(rank_), rows_y = dist_y_.rows(rank_);
  const double bytes_x = 8.0 * static_cast<double>(local_x_);
  const double bytes_y = 8.0 * static_cast<double>(local_y_);
  if (!explicit_ready_) {
    ScopedPhase p(*timers_, kYLinesPhase, 2 * bytes_y);
    line_y_.apply_explicit(u_.data(), work_.data(), rows_y);
  }
  if (single_rank()) {
    // One rank holds the whole field in layout Y, whose columns are the x-lines: solve them
    // where they lie (the same operations per line as after a transpose, so the same bits).
    {
      ScopedPhase p(*timers_, kXLinesPhase, 3 * bytes_x);
      line_x_.solve_columns(work_.data(), config_.ny, u_.data());
    }
    {
      ScopedPhase p(*timers_, kYLinesPhase, 3 * bytes_y);
      line_y_.solve(u_.data(), rows_y, work_.data());
    }
    explicit_ready_ = true;
    ++steps_;
    return;
  }
  if (distributed_x()) {
    distributed_x_half();
    {
      ScopedPhase p(*timers_, kYLinesPhase, 3 * bytes_y);
      line_y_.solve(u_.data(), rows_y, work_.data());
    }
    explicit_ready_ = true;
    ++steps_;
    return;
  }
  transpose(to_x_, work_.data(), lines_x_.data(), kTransposePhase);
  {
    // Solve in place (read + write), then the explicit half into work_ (write).
    ScopedPhase p(*timers_, kXLinesPhase, 3 * bytes_x);
    line_x_.solve(lines_x_.data(), rows_x, work_.data());
  }
  transpose(to_y_, work_.data(), u_.data(), kTransposePhase);
  {
    ScopedPhase p(*timers_, kYLinesPhase, 3 * bytes_y);
    line_y_.solve(u_.data(), rows_y, work_.data());
  }
  explicit_ready_ = true;
  ++steps_;
}

void Solver::distributed_x_half() {
  // work_ holds (I + A_y D_y) u in layout Y: x-line j is column j, point i of this rank's block
  // at work_[i * ny + j]. Solve the columns in place, then the explicit half in x into u_ (the
  // operations of AdiLine's explicit half, with the neighbours' points from the reduced system).
  const std::int64_t ny = config_.ny, rows = dist_y_.rows(rank_);
  const double h = line_x_.h();
  const bool dirichlet = config_.boundary == Boundary::Dirichlet;
  const double g = dirichlet ? config_.boundary_value : 0.0;
  // Bytes: the forward and backward sweeps (a read and a write each), the back substitution (a
  // read and a write) and the explicit half fused into it (a write); the exchange is timed apart.
  const double cells_bytes = 8.0 * static_cast<double>(local_y_);
  {
    ScopedPhase p(*timers_, kXLinesPhase, 4 * cells_bytes);
    if (dirichlet && g != 0.0) {
      // The known boundary values of the implicit unknowns move to the right-hand side.
      const double hg = h * g;
      double* w = work_.data();
      if (dist_y_.begin(rank_) == 0)
        for (std::int64_t j = 0; j < ny; ++j)
          w[j] += hg;
      if (dist_y_.begin(rank_) + rows == config_.nx)
        for (std::int64_t j = 0; j < ny; ++j)
          w[(rows - 1) * ny + j] += hg;
    }
    xdist_->prepare(work_.data());
  }
  {
    ScopedPhase p(*timers_, kReducedPhase, 16.0 * static_cast<double>(ny * mpi::comm_size(comm_)));
    xdist_->exchange();
  }
  // The back substitution (a read and a write) with the explicit half fused in (a write): each
  // row's explicit half as soon as the row and its neighbours are final, while they are in cache.
  ScopedPhase p(*timers_, kXLinesPhase, 3 * cells_bytes);
  const double* w = work_.data();
  double* v = u_.data();
  xdist_->finish(work_.data(), [&](std::int64_t i, std::int64_t first, std::int64_t count) {
    const double* ui = w + i * ny;
    const double* up = i > 0 ? ui - ny : xdist_->before();
    const double* down = i + 1 < rows ? ui + ny : xdist_->after();
    double* vi = v + i * ny;
    for (std::int64_t j = first; j < first + count; ++j) {
      const double b = up ? up[j] : g;
      const double a = down ? down[j] : g;
      vi[j] = ui[j] + h * ((b + a) - 2.0 * ui[j]);
    }
  });
}

double Solver::bytes_per_step() const noexcept {
  if (dev_)
    return device_bytes_per_step();
  const double lines = 3.0 * 8.0 * static_cast<double>(local_x_ + local_y_);
  if (distributed_x()) // y-lines as above, x-lines 56 B per cell (distributed_x_half)
    return (3.0 + 7.0) * 8.0 * static_cast<double>(local_y_);
  return single_rank() ? lines : lines + to_x_.bytes_moved() + to_y_.bytes_moved();
}

} // namespace tessera::heat2d
