// The heat2d ADI solver: u_t = alpha (u_xx + u_yy), Peaceman–Rachford, second order in space
// and time, distributed over the ranks of a communicator with no halo exchange.
//
// Layouts: the global field is u[j][i] with j the y index (0 … ny-1)
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

struct CUstream_st; // cudaStream_t, without the CUDA headers

namespace tessera::heat2d {

// The phase names of one step in the timers: the two transposes, and the line work.
inline constexpr const char* kTransposePhase = "step: transposes";
inline constexpr const char* kXLinesPhase = "step: x-lines";
inline constexpr const char* kYLinesPhase = "step: y-lines";
// LineSolve::Distributed: the allgather of the x-lines' reduced systems.
inline constexpr const char* kReducedPhase = "step: reduced exchange";

class Solver {
public:
  // Collective over comm. Validates the configuration (InputError naming the key) and builds
  // the two transpose plans. `timers`, when given, receives the step phases.
  Solver(const Config& config, MPI_Comm comm, PhaseTimers* timers = nullptr);
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  const Config& config() const noexcept { return config_; }
  MPI_Comm comm() const noexcept { return comm_; }
  int rank() const noexcept { return rank_; }
  const BlockDistribution& layout_x() const noexcept { return dist_x_; }
  const BlockDistribution& layout_y() const noexcept { return dist_y_; }

  // The state in layout Y: layout_y().rows(rank()) lines of ny values (host memory; with the
  // CUDA backend a copy of the device state, refreshed when stale).
  std::span<const double> field_y() const;
  // Writable view; writing the state invalidates work cached for the next step (and, with the
  // CUDA backend, is copied to the device before the next step).
  std::span<double> mutable_field_y();
  // CUDA backend: the state in layout Y on the device (as field_y(), device memory, valid until
  // the next step), with the work queued so far done. nullptr with the CPU backend.
  const double* device_field_y() const;
  // Collective: the state from / into layout X (layout_x().rows(rank()) × nx values).
  void set_field_x(const double* block_x);
  void get_field_x(double* block_x);

  // Collective: advances by one step.
  void step();
  std::int64_t steps_done() const noexcept { return steps_; }
  // steps_done() * dt: computed, never accumulated, so a restarted run has the same clock.
  double time() const noexcept { return static_cast<double>(steps_) * config_.dt; }
  void set_steps_done(std::int64_t steps) noexcept { steps_ = steps; }

  // Bytes of field data one step reads and writes on this rank (stencils, solves, transposes as
  // the plans count them), for the memory-bandwidth figure.
  double bytes_per_step() const noexcept;

  Backend backend() const noexcept { return config_.backend; }

private:
  struct Device; // solver_device.hpp
  // One rank: no layout changes inside a step (the CPU solves x-lines as columns of layout Y).
  bool single_rank() const noexcept { return one_rank_; }
  // Several ranks with LineSolve::Distributed: the x-lines solved in layout Y.
  bool distributed_x() const noexcept { return xdist_ != nullptr; }
  void distributed_x_half();
  void device_distributed_x_half(); // the same on the GPU (solver_cuda.cpp)
  void transpose(TransposePlan& plan, const double* in, double* out, const char* phase);
  TransposeOptions plan_options() const;
  // The CUDA backend (solver_cuda.cpp).
  void device_init();
  void device_step();
  void tiled_step();
  void finish_device_step(CUstream_st* s);
  void device_set_field_x(const double* block_x);
  void device_get_field_x(double* block_x);
  void device_upload();                           // u_ → device state (after mutable_field_y)
  void device_download() const;                   // device state → u_
  void device_to_x(const double* yt, double* xt); // layout changes of the line blocks
  void device_to_y(const double* xt, double* yt);
  void device_relayout(TransposePlan& plan, const double* in, double* out, std::int64_t n_from,
                       std::int64_t n_to, std::int64_t from_cells);
  // Adds the phase times the device has finished to the timers (all of them when `wait`).
  void device_collect_times(bool wait) const;
  double device_bytes_per_step() const noexcept;

  Config config_;
  MPI_Comm comm_;
  int rank_ = 0;
  bool one_rank_ = true;
  PhaseTimers* timers_;
  PhaseTimers own_timers_;
  BlockDistribution dist_x_, dist_y_;
  std::size_t local_x_ = 0, local_y_ = 0;
  AdiLine line_x_, line_y_;
  TransposePlan to_x_, to_y_;                 // layout Y → X and X → Y
  std::unique_ptr<DistributedTridiag> xdist_; // LineSolve::Distributed on several ranks
  mutable std::vector<double> u_;             // the state, layout Y (CUDA: the host copy)
  std::vector<double> work_;                  // the explicit half of the next transpose's input
  std::vector<double> lines_x_;               // layout X lines being solved
  bool explicit_ready_ = false;               // work_ holds (I + A_y D_y) u_
  std::int64_t steps_ = 0;
  std::unique_ptr<Device> dev_;     // CUDA backend only
  mutable bool host_stale_ = false; // CUDA: u_ is older than the device state
  mutable bool host_newer_ = false; // CUDA: u_ was written through mutable_field_y()
};

} // namespace tessera::heat2d
