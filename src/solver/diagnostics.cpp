// Total heat, extremes and error norms of the heat2d state through ReducePlan.
#include "solver/diagnostics.hpp"

namespace tessera::heat2d {

DiagnosticsPlan::DiagnosticsPlan(const Solver& solver, const Exact& exact, PhaseTimers* timers)
    : exact_(exact), cell_(dx(solver.config()) * dy(solver.config())),
      field_(solver.layout_y(), DType::f64, solver.comm(), Backend::Cpu,
             {Op::Sum, Op::Min, Op::Max}, Axis::All, {.timers = nullptr}),
      error_(solver.layout_y(), DType::f64, solver.comm(), Backend::Cpu, {Op::Norm2, Op::NormInf},
             Axis::All, {.timers = nullptr}),
      err_(exact.known() ? solver.field_y().size() : 0), timers_(timers) {}

Diagnostics DiagnosticsPlan::compute(const Solver& solver) {
  PhaseTimers scratch;
  ScopedPhase p(timers_ ? *timers_ : scratch, "diagnostics");
  Diagnostics d;
  d.step = solver.steps_done();
  d.time = solver.time();
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
