// Total heat, extremes and error norms of the heat2d state through ReducePlan.
#include "solver/diagnostics.hpp"

#include <numbers>

#include "cuda/heat2d.hpp"

namespace tessera::heat2d {

namespace {

bool on_device(const Solver& solver) {
  return solver.backend() == Backend::Cuda;
}

ReduceOptions reduce_options(const Solver& solver) {
  return {.memory = on_device(solver) ? Memory::Device : Memory::Host, .timers = nullptr};
}

// The factors of the sine mode as Exact computes them (fields.cpp): the device evaluates the
// exact solution from the same doubles with the same operations.
std::vector<double> sine_profile(std::int64_t first, std::int64_t count, double length,
                                 std::int64_t n, Boundary b) {
  std::vector<double> s(static_cast<std::size_t>(count));
  const double k = (b == Boundary::Periodic ? 2.0 : 1.0) * std::numbers::pi / length;
  for (std::int64_t i = 0; i < count; ++i)
    s[static_cast<std::size_t>(i)] = std::sin(k * coordinate(first + i, length, n, b));
  return s;
}

} // namespace

DiagnosticsPlan::DiagnosticsPlan(const Solver& solver, const Exact& exact, PhaseTimers* timers)
    : exact_(exact), cell_(dx(solver.config()) * dy(solver.config())),
      field_(solver.layout_y(), DType::f64, solver.comm(), solver.backend(),
             {Op::Sum, Op::Min, Op::Max}, Axis::All, reduce_options(solver)),
      error_(solver.layout_y(), DType::f64, solver.comm(), solver.backend(),
             {Op::Norm2, Op::NormInf}, Axis::All, reduce_options(solver)),
      timers_(timers), device_(on_device(solver)) {
  const std::size_t local = static_cast<std::size_t>(solver.layout_y().local_size(solver.rank()));
  if (!exact.known())
    return;
  if (!device_) {
    err_.assign(local, 0.0);
    return;
  }
  const Config& c = solver.config();
  const BlockDistribution& dist = solver.layout_y();
  rows_ = dist.rows(solver.rank());
  ny_ = c.ny;
  const double k = (c.boundary == Boundary::Periodic ? 2.0 : 1.0) * std::numbers::pi;
  rate_ = c.alpha * k * k * (1.0 / (c.lx * c.lx) + 1.0 / (c.ly * c.ly));
  offset_ = c.boundary == Boundary::Dirichlet ? c.boundary_value : 0.0;
  std::vector<double> f = sine_profile(dist.begin(solver.rank()), rows_, c.lx, c.nx, c.boundary);
  const std::vector<double> sy = sine_profile(0, c.ny, c.ly, c.ny, c.boundary);
  f.insert(f.end(), sy.begin(), sy.end());
  stream_ = cuda::make_stream();
  profiles_ = cuda::DeviceBuffer(f.size() * sizeof(double));
  cuda::copy(profiles_.data(), f.data(), profiles_.bytes());
  err_dev_ = cuda::DeviceBuffer(local * sizeof(double));
}

Diagnostics DiagnosticsPlan::compute(const Solver& solver) {
  PhaseTimers scratch;
  ScopedPhase p(timers_ ? *timers_ : scratch, "diagnostics");
  Diagnostics d;
  d.step = solver.steps_done();
  d.time = solver.time();
  if (device_) {
    const double* u = solver.device_field_y();
    const ReduceResult r = field_.execute(u);
    d.total = r.scalar(Op::Sum) * cell_;
    d.min = r.scalar(Op::Min);
    d.max = r.scalar(Op::Max);
    if (exact_.known()) {
      // As Exact::error.
      const double amp = std::exp(-rate_ * d.time);
      const double* sx = profiles_.as<double>();
      cuda::heat2d_sine_error(stream_.get(), u, err_dev_.as<double>(), rows_, ny_, sx, sx + rows_,
                              amp, offset_);
      cuda::synchronize(stream_.get());
      const ReduceResult e = error_.execute(err_dev_.as<double>());
      d.l2_error = e.scalar(Op::Norm2) * std::sqrt(cell_);
      d.linf_error = e.scalar(Op::NormInf);
    }
    return d;
  }
  const ReduceResult r = field_.execute(solver.field_y().data());
  d.total = r.scalar(Op::Sum) * cell_;
  d.min = r.scalar(Op::Min);
  d.max = r.scalar(Op::Max);
  if (exact_.known()) {
    exact_.error(solver.field_y().data(), d.time, err_.data());
    const ReduceResult e = error_.execute(err_.data());
    d.l2_error = e.scalar(Op::Norm2) * std::sqrt(cell_);
    d.linf_error = e.scalar(Op::NormInf);
  }
  return d;
}

void DiagnosticsSeries::append(const Diagnostics& d) {
  step.push_back(d.step);
  time.push_back(d.time);
  total.push_back(d.total);
  min.push_back(d.min);
  max.push_back(d.max);
  l2_error.push_back(d.l2_error);
  linf_error.push_back(d.linf_error);
}

void DiagnosticsSeries::truncate_after(std::int64_t last_step) {
  std::size_t keep = 0;
  while (keep < step.size() && step[keep] <= last_step)
    ++keep;
  step.resize(keep);
  for (auto* v : {&time, &total, &min, &max, &l2_error, &linf_error})
    v->resize(keep);
}

} // namespace tessera::heat2d
