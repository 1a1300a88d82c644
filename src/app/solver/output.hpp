// The heat2d output file, written behind the computation: the compute side copies a snapshot
// (the state in layout X) into a buffer and pushes it onto a bounded StagingQueue; the I/O
// thread pops and writes it while stepping continues. Stepping waits on the file system only
// when `queue_capacity` snapshots are still unwritten; that wait is measured.
//
// File layout (besides the provenance attributes, io/provenance.hpp):
//   root attributes  kind = "heat2d output", run_id, steps_done, finished (1, or 0 when the
//                    run stopped on a signal), restarted_from ("" or the checkpoint), and the
//                    problem (nx, ny, lx, ly, alpha, dt, boundary, boundary_value, initial)
//   /grid/x [nx], /grid/y [ny]       coordinates of the unknowns
//   /fields/u [nsnap, ny, nx]         snapshots (f64), chunked one snapshot slab at a time
//   /fields/time [nsnap], /fields/step [nsnap]
//   /fields/x, /fields/y             hard links to /grid/x, /grid/y (the same datasets)
//   /grid/x, /grid/y and /fields/time are HDF5 dimension scales (named x, y, time) attached to
//   the dimensions of /fields/u (io/h5_dimension_scales.hpp); netCDF-4 and xarray find them
//   through the names in /fields
//   /diagnostics/{step,time,total,min,max}[, l2_error, linf_error]
//   /xdmf/u/<k> [ny, nx]             snapshot k as a 2-D virtual dataset (a view of /fields/u,
//                                    no copy), which the XDMF sidecar names
// and next to it NAME.xmf, the XDMF description of the grid and the snapshots (ParaView,
// VisIt), committed with the file.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/timers.hpp"
#include "io/h5_file.hpp"
#include "io/io_thread.hpp"
#include "io/provenance.hpp"
#include "io/staging_queue.hpp"
#include "solver/diagnostics.hpp"
#include "solver/fields.hpp"
#include "solver/solver.hpp"

namespace tessera::heat2d {

struct OutputSettings {
  std::string path;
  io::Provenance provenance;
  std::string run_id;
  std::string restarted_from; // "" for a fresh run
  std::size_t queue_capacity = 2;
};

class Output {
public:
  // Collective over the solver's communicator: creates the output (its temporary) with the grid and
  // an empty snapshot series (on the I/O thread; waits for it, so a bad path fails here on every
  // rank).
  Output(io::IoThread& io, const Solver& solver, const Initial& init, OutputSettings settings,
         PhaseTimers* timers);
  // An uncommitted file is removed.
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  // Collective: copies the snapshots with step <= last_step from a previous output of the same
  // run (same run_id) into this file. Returns how many were copied; 0, with a warning, when
  // `previous` is missing or belongs to another run.
  std::int64_t carry_over(const std::string& previous, std::int64_t last_step);

  // Collective: queues a snapshot of the current state.
  void snapshot(Solver& solver);
  // Collective: writes the time series, diagnostics and attributes, commits; waits for all.
  void finish(const DiagnosticsSeries& diagnostics, bool finished, std::int64_t steps_done);

  std::int64_t snapshots() const noexcept { return static_cast<std::int64_t>(times_.size()); }
  // Seconds the compute side spent blocked on a full queue.
  double wait_seconds() const;
  const std::string& path() const noexcept { return settings_.path; }

private:
  struct Snapshot {
    std::int64_t index = 0;
    std::vector<double> field_x;
  };
  void check_pending(std::exception_ptr local);
  void write_snapshot(); // I/O thread

  io::IoThread& io_;
  MPI_Comm comm_;
  int rank_ = 0;
  BlockDistribution dist_x_;
  Config config_;
  bool with_error_ = false;
  OutputSettings settings_;
  PhaseTimers* timers_;
  PhaseTimers own_timers_;
  io::StagingQueue<Snapshot> queue_;
  std::optional<io::H5File> file_; // touched on the I/O thread only
  std::deque<std::future<void>> pending_;
  std::vector<double> times_;
  std::vector<std::int64_t> steps_;
};

} // namespace tessera::heat2d
