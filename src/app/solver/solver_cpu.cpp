// The CPU step engine of the heat2d solver (see solver.hpp): the ADI step in host memory, with
// the layout changes by the transpose plans, or none on one rank.
#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "mpi/communicator.hpp"
#include "solver/solver.hpp"

namespace tessera::heat2d {

namespace {

class CpuStep final : public StepEngine {
public:
  explicit CpuStep(SolverState& s) : s_(s) {
    // The exchange trial (see Solver's constructor), on zeros: the state stays 0.
    work_.assign(std::max(s_.local_x, s_.local_y), 0.0);
    lines_x_.assign(s_.local_x, 0.0);
    s_.to_x.execute(work_.data(), lines_x_.data());
    s_.to_y.execute(lines_x_.data(), s_.u.data());
  }

  std::span<const double> field_y() override { return {s_.u.data(), s_.local_y}; }
  std::span<double> mutable_field_y() override {
    explicit_ready_ = false;
    return {s_.u.data(), s_.local_y};
  }
  void set_field_x(const double* block_x) override {
    explicit_ready_ = false;
    s_.transpose(s_.to_y, block_x, s_.u.data(), "layout changes");
  }
  void get_field_x(double* block_x) override {
    s_.transpose(s_.to_x, s_.u.data(), block_x, "layout changes");
  }
  void step() override;
  double bytes_per_step() const noexcept override;

private:
  // Several ranks with LineSolve::Distributed: the x-lines solved in layout Y.
  void distributed_x_half();

  SolverState& s_;
  std::vector<double> work_;    // the explicit half of the next transpose's input
  std::vector<double> lines_x_; // layout X lines being solved
  bool explicit_ready_ = false; // work_ holds (I + A_y D_y) u
};

void CpuStep::step() {
  const std::int64_t rows_x = s_.dist_x.rows(s_.rank), rows_y = s_.dist_y.rows(s_.rank);
  const double bytes_x = 8.0 * static_cast<double>(s_.local_x);
  const double bytes_y = 8.0 * static_cast<double>(s_.local_y);
  if (!explicit_ready_) {
    ScopedPhase p(*s_.timers, kYLinesPhase, 2 * bytes_y);
    s_.line_y.apply_explicit(s_.u.data(), work_.data(), rows_y);
  }
  if (s_.one_rank) {
    // One rank holds the whole field in layout Y, whose columns are the x-lines: solve them
    // where they lie (the same operations per line as after a transpose, so the same bits).
    {
      ScopedPhase p(*s_.timers, kXLinesPhase, 3 * bytes_x);
      s_.line_x.solve_columns(work_.data(), s_.config.ny, s_.u.data());
    }
    {
      ScopedPhase p(*s_.timers, kYLinesPhase, 3 * bytes_y);
      s_.line_y.solve(s_.u.data(), rows_y, work_.data());
    }
    explicit_ready_ = true;
    ++s_.steps;
    return;
  }
  if ((s_.xdist != nullptr)) {
    distributed_x_half();
    {
      ScopedPhase p(*s_.timers, kYLinesPhase, 3 * bytes_y);
      s_.line_y.solve(s_.u.data(), rows_y, work_.data());
    }
    explicit_ready_ = true;
    ++s_.steps;
    return;
  }
  s_.transpose(s_.to_x, work_.data(), lines_x_.data(), kTransposePhase);
  {
    // Solve in place (read + write), then the explicit half into work_ (write).
    ScopedPhase p(*s_.timers, kXLinesPhase, 3 * bytes_x);
    s_.line_x.solve(lines_x_.data(), rows_x, work_.data());
  }
  s_.transpose(s_.to_y, work_.data(), s_.u.data(), kTransposePhase);
  {
    ScopedPhase p(*s_.timers, kYLinesPhase, 3 * bytes_y);
    s_.line_y.solve(s_.u.data(), rows_y, work_.data());
  }
  explicit_ready_ = true;
  ++s_.steps;
}

void CpuStep::distributed_x_half() {
  // work_ holds (I + A_y D_y) u in layout Y: x-line j is column j, point i of this rank's block
  // at work_[i * ny + j]. Solve the columns in place, then the explicit half in x into s_.u (the
  // operations of AdiLine's explicit half, with the neighbours' points from the reduced system).
  const std::int64_t ny = s_.config.ny, rows = s_.dist_y.rows(s_.rank);
  const double h = s_.line_x.h();
  const bool dirichlet = s_.config.boundary == Boundary::Dirichlet;
  const double g = dirichlet ? s_.config.boundary_value : 0.0;
  // Bytes: the forward and backward sweeps (a read and a write each), the back substitution (a
  // read and a write) and the explicit half fused into it (a write); the exchange is timed apart.
  const double cells_bytes = 8.0 * static_cast<double>(s_.local_y);
  {
    ScopedPhase p(*s_.timers, kXLinesPhase, 4 * cells_bytes);
    if (dirichlet && g != 0.0) {
      // The known boundary values of the implicit unknowns move to the right-hand side.
      const double hg = h * g;
      double* w = work_.data();
      if (s_.dist_y.begin(s_.rank) == 0)
        for (std::int64_t j = 0; j < ny; ++j)
          w[j] += hg;
      if (s_.dist_y.begin(s_.rank) + rows == s_.config.nx)
        for (std::int64_t j = 0; j < ny; ++j)
          w[(rows - 1) * ny + j] += hg;
    }
    s_.xdist->prepare(work_.data());
  }
  {
    ScopedPhase p(*s_.timers, kReducedPhase,
                  16.0 * static_cast<double>(ny * mpi::comm_size(s_.comm)));
    s_.xdist->exchange();
  }
  // The back substitution (a read and a write) with the explicit half fused in (a write): each
  // row's explicit half as soon as the row and its neighbours are final, while they are in cache.
  ScopedPhase p(*s_.timers, kXLinesPhase, 3 * cells_bytes);
  const double* w = work_.data();
  double* v = s_.u.data();
  s_.xdist->finish(work_.data(), [&](std::int64_t i, std::int64_t first, std::int64_t count) {
    const double* ui = w + i * ny;
    const double* up = i > 0 ? ui - ny : s_.xdist->before();
    const double* down = i + 1 < rows ? ui + ny : s_.xdist->after();
    double* vi = v + i * ny;
    for (std::int64_t j = first; j < first + count; ++j) {
      const double b = up ? up[j] : g;
      const double a = down ? down[j] : g;
      vi[j] = ui[j] + h * ((b + a) - 2.0 * ui[j]);
    }
  });
}

double CpuStep::bytes_per_step() const noexcept {
  const double lines = 3.0 * 8.0 * static_cast<double>(s_.local_x + s_.local_y);
  if ((s_.xdist != nullptr)) // y-lines as above, x-lines 56 B per cell (distributed_x_half)
    return (3.0 + 7.0) * 8.0 * static_cast<double>(s_.local_y);
  return s_.one_rank ? lines : lines + s_.to_x.bytes_moved() + s_.to_y.bytes_moved();
}

} // namespace

std::unique_ptr<StepEngine> make_cpu_step(SolverState& state) {
  return std::make_unique<CpuStep>(state);
}

} // namespace tessera::heat2d
