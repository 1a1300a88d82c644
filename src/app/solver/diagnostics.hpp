// Diagnostics of the heat2d state, from the distributed reductions (mpi/reduce_plan.hpp):
// total heat, extremes and, when the exact solution is known, the error norms.
//
//   total       sum of u * dx * dy over the unknowns (conserved with periodic boundaries)
//   min, max    extremes of u
//   l2_error    sqrt(sum of (u - exact)^2 * dx * dy): the discrete L2 norm over the domain
//   linf_error  max |u - exact|
// The sums follow the canonical order (core/reduction.hpp), so the values do not depend on
// the number of ranks or threads. With the CUDA backend the field stays on the device: the
// reductions run there (the same order, the same bits) and only the scalars come back.
#pragma once

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/timers.hpp"
#include "cuda/buffer.hpp"
#include "cuda/stream.hpp"
#include "mpi/reduce_plan.hpp"
#include "solver/fields.hpp"
#include "solver/solver.hpp"

namespace tessera::heat2d {

struct Diagnostics {
  std::int64_t step = 0;
  double time = 0.0;
  double total = 0.0, min = 0.0, max = 0.0;
  double l2_error = std::numeric_limits<double>::quiet_NaN(); // NaN: no exact solution
  double linf_error = std::numeric_limits<double>::quiet_NaN();
};

class DiagnosticsPlan {
public:
  // Collective over the solver's communicator.
  DiagnosticsPlan(const Solver& solver, const Exact& exact, PhaseTimers* timers = nullptr);
  // Collective: the same values on every rank.
  Diagnostics compute(const Solver& solver);
  bool has_error() const noexcept { return exact_.known(); }

private:
  Exact exact_;
  double cell_ = 0.0; // dx * dy
  ReducePlan field_, error_;
  std::vector<double> err_;
  PhaseTimers* timers_;
  // CUDA backend: the exact solution's factors (this rank's x profile, then all of y) and the
  // error block on the device.
  bool device_ = false;
  cuda::unique_stream stream_;
  cuda::DeviceBuffer profiles_, err_dev_;
  std::int64_t rows_ = 0, ny_ = 0;
  double rate_ = 0.0, offset_ = 0.0;
};

// The time series of diagnostics, as written to /diagnostics/.
struct DiagnosticsSeries {
  std::vector<std::int64_t> step;
  std::vector<double> time, total, min, max, l2_error, linf_error;
  void append(const Diagnostics& d);
  std::size_t size() const noexcept { return step.size(); }
  // Drops the entries after `last_step` (a restart continues from there).
  void truncate_after(std::int64_t last_step);
};

} // namespace tessera::heat2d
