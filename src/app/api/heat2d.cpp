// tessera/heat2d.hpp over the internal solver (solver/solver.hpp, fields, diagnostics).
#include <tessera/heat2d.hpp>

#include <optional>

#include "solver/diagnostics.hpp"
#include "solver/fields.hpp"
#include "solver/heat2d_config.hpp"
#include "solver/solver.hpp"

namespace tessera {

namespace {
heat2d::Config config_of(const Heat2dSettings& s) {
  heat2d::Config c;
  c.nx = s.nx;
  c.ny = s.ny;
  c.lx = s.lx;
  c.ly = s.ly;
  c.alpha = s.alpha;
  c.dt = s.dt;
  c.boundary = s.boundary == Heat2dBoundary::Periodic ? heat2d::Boundary::Periodic
                                                      : heat2d::Boundary::Dirichlet;
  c.boundary_value = s.boundary_value;
  c.backend = s.backend;
  return c;
}
heat2d::Initial initial_of(const Heat2dSettings& s) {
  heat2d::Initial i;
  i.kind = s.initial == Heat2dInitial::Gaussian ? heat2d::InitialKind::Gaussian
                                                : heat2d::InitialKind::Sine;
  i.width = s.width;
  return i;
}
} // namespace

struct Heat2dSolver::Impl {
  Impl(const Heat2dSettings& s, MPI_Comm comm)
      : solver(config_of(s), comm),
        exact(solver.config(), initial_of(s), solver.layout_y(), solver.rank()) {
    heat2d::fill_initial(solver.config(), initial_of(s), solver.layout_y(), solver.rank(),
                         solver.mutable_field_y().data());
  }
  heat2d::Solver solver;
  heat2d::Exact exact;
  std::optional<heat2d::DiagnosticsPlan> diagnostics; // built on first use
};

Heat2dSolver::Heat2dSolver(const Heat2dSettings& settings, MPI_Comm comm)
    : impl_(std::make_unique<Impl>(settings, comm)) {}
Heat2dSolver::~Heat2dSolver() = default;
Heat2dSolver::Heat2dSolver(Heat2dSolver&&) noexcept = default;
Heat2dSolver& Heat2dSolver::operator=(Heat2dSolver&&) noexcept = default;

void Heat2dSolver::step(std::int64_t steps) {
  for (std::int64_t n = 0; n < steps; ++n)
    impl_->solver.step();
}
std::int64_t Heat2dSolver::steps_done() const noexcept {
  return impl_->solver.steps_done();
}
double Heat2dSolver::time() const noexcept {
  return impl_->solver.time();
}
const BlockDistribution& Heat2dSolver::layout() const noexcept {
  return impl_->solver.layout_x();
}
void Heat2dSolver::read_field(double* block) {
  impl_->solver.get_field_x(block);
}
void Heat2dSolver::write_field(const double* block) {
  impl_->solver.set_field_x(block);
}

Heat2dDiagnostics Heat2dSolver::diagnostics() {
  if (!impl_->diagnostics)
    impl_->diagnostics.emplace(impl_->solver, impl_->exact);
  const heat2d::Diagnostics d = impl_->diagnostics->compute(impl_->solver);
  return {d.total, d.min, d.max, d.l2_error, d.linf_error};
}

} // namespace tessera
