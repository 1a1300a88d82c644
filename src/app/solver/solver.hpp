// The heat2d ADI solver: u_t = alpha (u_xx + u_yy), Peaceman–Rachford, second order in space
// and time, distributed over the ranks of a communicator with no halo exchange.
//
// Layouts (docs/architecture.md): the global field is u[j][i] with j the y index (0 … ny-1)
// and i the x index (0 … nx-1).
//   layout X  BlockDistribution({ny, nx}, P): a rank holds full x-lines (rows j, nx contiguous
//             values each) for its block of y — the file layout of /fields/u.
//   layout Y  BlockDistribution({nx, ny}, P): the transpose; a rank holds full y-lines.
// The state between steps is kept in layout Y. One step, with A = alpha dt / 2 (1/dx^2, 1/dy^2):
//   explicit half in y (layout Y) → transpose → implicit x-solves + explicit half in x
//   (layout X) → transpose → implicit y-solves (layout Y)
// and the explicit half in y of the next step is fused into the y-solves while the lines are in
// cache. With Config::line_solve == Distributed on several ranks there are no transposes in a
// step: the x-lines are solved where they lie in layout Y (each rank holds a contiguous piece of
// every x-line) by mpi/distributed_tridiag.hpp, which exchanges 2 values per x-line and rank;
// those fields agree with the transposed ones to rounding, not bit for bit. On one rank the CPU
// skips both transposes: the x-lines are the columns of layout Y and are solved there
// (AdiLine::solve_columns), with the same operations and so the same bits. The two distributed
// transposes carry all communication; the tridiagonal solves and the stencils work on whole lines,
// so every value is computed by the same operations whatever the number of ranks or threads: the
// fields are bit-identical on any rank count.
//
// The step runs in a StepEngine chosen once, by the backend: CpuStep (solver_cpu.cpp) or
// CudaStep (solver_cuda.cpp), over the SolverState both share.
//
// With Config::backend == Cuda the state lives on the rank's GPU (solver_cuda.cpp): the same
// operations on every line, with the lines stored as columns so that the line kernels are
// coalesced, queued on one stream; the same bits as the CPU (with Distributed too: the x-lines'
// sweeps on the device, the reduced system on the host). On one rank, grids of more than 64
// points a side are stepped by tiles instead (cuda/heat2d_tiles.hpp: no transposes, partitioned
// line solves), which agree with the CPU to rounding. The host views (field_y,
// get_field_x, …) and device_field_y copy on demand.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/block_distribution.hpp"
#include "core/timers.hpp"
#include "mpi/distributed_tridiag.hpp"
#include "mpi/transpose_plan.hpp"
#include "solver/adi_line.hpp"
#include "solver/heat2d_config.hpp"

namespace tessera::heat2d {

// The phase names of one step in the timers: the two transposes, and the line work.
inline constexpr const char* kTransposePhase = "step: transposes";
inline constexpr const char* kXLinesPhase = "step: x-lines";
inline constexpr const char* kYLinesPhase = "step: y-lines";
// LineSolve::Distributed: the allgather of the x-lines' reduced systems.
inline constexpr const char* kReducedPhase = "step: reduced exchange";

// What a step engine works on, owned by the Solver: the configuration, the two layouts, the
// line operators, the transpose plans and the state in layout Y (the host copy on a GPU).
struct SolverState {
  // Collective over comm. Validates the configuration (InputError naming the key) and builds
  // the two transpose plans.
  SolverState(const Config& config, MPI_Comm comm, PhaseTimers* timers);

  Config config;
  MPI_Comm comm;
  int rank = 0;
  bool one_rank = true; // no layout changes inside a step on the CPU
  PhaseTimers* timers;
  PhaseTimers own_timers;
  BlockDistribution dist_x, dist_y;
  std::size_t local_x = 0, local_y = 0;
  AdiLine line_x, line_y;
  TransposePlan to_x, to_y;                  // layout Y → X and X → Y
  std::unique_ptr<DistributedTridiag> xdist; // LineSolve::Distributed on several ranks
  std::vector<double> u;                     // the state, layout Y (CUDA: the host copy)
  std::int64_t steps = 0;

  // Runs `plan` on in → out, timed as `phase`.
  void transpose(TransposePlan& plan, const double* in, double* out, const char* phase);

private:
  TransposeOptions plan_options() const;
};

// One backend's step and the state's way in and out, chosen once by the Solver (the CPU's in
// solver_cpu.cpp, the GPU's in solver_cuda.cpp); the Solver's methods of the same names.
class StepEngine {
public:
  virtual ~StepEngine() = default;
  virtual std::span<const double> field_y() = 0;
  virtual std::span<double> mutable_field_y() = 0;
  virtual const double* device_field_y() { return nullptr; }
  virtual void set_field_x(const double* block_x) = 0;
  virtual void get_field_x(double* block_x) = 0;
  virtual void step() = 0;
  virtual double bytes_per_step() const noexcept = 0;
};

std::unique_ptr<StepEngine> make_cpu_step(SolverState& state);
std::unique_ptr<StepEngine> make_cuda_step(SolverState& state);

class Solver {
public:
  // Collective over comm. Validates the configuration (InputError naming the key) and builds
  // the two transpose plans. `timers`, when given, receives the step phases.
  Solver(const Config& config, MPI_Comm comm, PhaseTimers* timers = nullptr);
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  const Config& config() const noexcept { return state_.config; }
  MPI_Comm comm() const noexcept { return state_.comm; }
  int rank() const noexcept { return state_.rank; }
  const BlockDistribution& layout_x() const noexcept { return state_.dist_x; }
  const BlockDistribution& layout_y() const noexcept { return state_.dist_y; }

  // The state in layout Y: layout_y().rows(rank()) lines of ny values (host memory; with the
  // CUDA backend a copy of the device state, refreshed when stale).
  std::span<const double> field_y() const { return engine_->field_y(); }
  // Writable view; writing the state invalidates work cached for the next step (and, with the
  // CUDA backend, is copied to the device before the next step).
  std::span<double> mutable_field_y() { return engine_->mutable_field_y(); }
  // CUDA backend: the state in layout Y on the device (as field_y(), device memory, valid until
  // the next step), with the work queued so far done. nullptr with the CPU backend.
  const double* device_field_y() const { return engine_->device_field_y(); }
  // Collective: the state from / into layout X (layout_x().rows(rank()) × nx values).
  void set_field_x(const double* block_x) { engine_->set_field_x(block_x); }
  void get_field_x(double* block_x) { engine_->get_field_x(block_x); }

  // Collective: advances by one step.
  void step() { engine_->step(); }
  std::int64_t steps_done() const noexcept { return state_.steps; }
  // steps_done() * dt: computed, never accumulated, so a restarted run has the same clock.
  double time() const noexcept { return static_cast<double>(state_.steps) * state_.config.dt; }
  void set_steps_done(std::int64_t steps) noexcept { state_.steps = steps; }

  // Bytes of field data one step reads and writes on this rank (stencils, solves, transposes as
  // the plans count them), for the memory-bandwidth figure.
  double bytes_per_step() const noexcept { return engine_->bytes_per_step(); }

  Backend backend() const noexcept { return state_.config.backend; }

private:
  SolverState state_;
  std::unique_ptr<StepEngine> engine_;
};

} // namespace tessera::heat2d
