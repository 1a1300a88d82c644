// A whole heat2d run: initial state (analytic, from a dataset, or from a checkpoint), the step
// loop with diagnostics, snapshots written behind, periodic checkpoints, and a clean stop with a
// checkpoint on SIGTERM / SIGUSR1. The `heat2d` job kind (app/jobs/job_heat2d.cpp) fills
// RunSettings from a deck; tests call run() directly.
//
// Schedule, for step numbers n = 1 … steps (step 0 is the initial state):
//   diagnostics  at 0, every diagnostics_every steps, and at the last step
//   snapshots    at 0, every snapshot_every steps, and at the last step
//   checkpoints  every checkpoint_every steps, at the last step (when the run writes an output or
//                names a checkpoint file), and when a signal arrives; a
//                signal that came before the first step (during the set-up) stops the run
//                there, with a checkpoint of the state it starts from
// (an `every` of 0 means only the fixed points). The field must stay finite: it is checked
// (through the diagnostics' sum, min and max) at the start, at every diagnostics step and before
// every checkpoint; a NaN or an infinity stops the run with a NumericalError naming the step,
// and the last checkpoint, which holds a checked state, is kept. A run restarted from a checkpoint
// at step m carries the snapshots up to m over from the output of the same run (the same run_id)
// when that output reached step m; otherwise its output starts with the state at m.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io/provenance.hpp"
#include "solver/diagnostics.hpp"
#include "solver/fields.hpp"
#include "solver/heat2d_config.hpp"

namespace tessera::heat2d {

struct RunSettings {
  Config config;
  Initial initial;
  std::int64_t steps = 0; // the run ends at this step number
  std::int64_t snapshot_every = 0, diagnostics_every = 0, checkpoint_every = 0;
  // 0: one checkpoint file, replaced each time; N: numbered checkpoints, the N newest kept
  // (solver/checkpoint_files.hpp).
  std::int64_t checkpoint_keep = 0;
  std::string output_file;     // "": no output file
  std::string checkpoint_file; // "": checkpoint_path(output_file)
  std::string restart_file;    // "": start from the initial condition
  io::Provenance provenance;
  std::size_t queue_capacity = 2; // snapshots in flight
  bool handle_signals = true;
  bool keep_final_field = false; // RunResult::final_field_x (tests)
  // Called on every rank after each step (tests use it to raise a signal or spoil the field).
  std::function<void(std::int64_t step, Solver& solver)> after_step;
};

struct RunResult {
  std::int64_t start_step = 0, steps_done = 0;
  bool interrupted = false; // stopped on a signal (a checkpoint was written), maybe before the
                            // first step (steps_done == start_step)
  int signal = 0;
  std::string checkpoint; // the last checkpoint written, "" when none
  std::string run_id;
  DiagnosticsSeries diagnostics;
  double step_seconds = 0.0;      // this rank's wall time inside Solver::step
  double transpose_seconds = 0.0; // of which in the transposes
  double reduced_seconds = 0.0;   // of which in the reduced systems' exchange (line_solve
                                  // distributed)
  double snapshot_wait_seconds = 0.0;
  double bytes_per_step = 0.0; // this rank's field traffic per step
  std::string timing_table;    // rank 0 only
  std::string timing_json;     // the same as JSON (mpi::timing_json), rank 0 only
  std::vector<double> final_field_x;
};

// "out.h5" → "out.ckpt.h5"; "" → "heat2d.ckpt.h5".
std::string checkpoint_path(const std::string& output_file);

// Collective over comm. Throws on every rank (agreed) when the settings, the initial dataset or
// the checkpoint are bad or the output cannot be written, and NumericalError when the field
// stops being finite.
RunResult run(const RunSettings& settings, MPI_Comm comm);

} // namespace tessera::heat2d
