// heat2d checkpoints: everything a run needs to continue bit for bit (the field, the step, the
// diagnostics so far) in one HDF5 file, written as NAME.XXXXXX.partial and renamed when complete,
// so the previous checkpoint stays valid until the next one is whole.
//
// File layout (besides the provenance attributes of every tessera file, io/provenance.hpp):
//   root attributes  kind = "heat2d checkpoint", step, time, run_id, and the problem:
//                    nx, ny, lx, ly, alpha, dt, boundary, boundary_value, initial
//   /fields/u        [ny, nx] f64: the state at `step`
//   /diagnostics/    the series up to `step` (as in the output file)
// The functions here make HDF5 calls: run them on the I/O thread, on its communicator.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/block_distribution.hpp"
#include "io/h5_file.hpp"
#include "io/provenance.hpp"
#include "solver/diagnostics.hpp"
#include "solver/fields.hpp"
#include "solver/heat2d_config.hpp"

namespace tessera::heat2d {

// The problem attributes shared by checkpoints and output files.
void write_problem_attributes(io::H5File& f, const Config& c, const Initial& init);
// Throws InputError naming the key when the file was written for another problem (the
// settings that must not change across a restart: grid, physics, dt, boundary, initial).
void check_problem_attributes(const io::H5File& f, const Config& c, const Initial& init);

void write_diagnostics(io::H5File& f, const DiagnosticsSeries& s, bool with_error);
DiagnosticsSeries read_diagnostics(const io::H5File& f);

struct CheckpointState {
  std::int64_t step = 0;
  double time = 0.0;
  std::string run_id;
  DiagnosticsSeries diagnostics;
  std::vector<double> field_x; // this rank's rows of layout X
};

// Collective over comm (the I/O thread's).
void write_checkpoint(const std::string& path, MPI_Comm comm, const Config& c, const Initial& init,
                      const io::Provenance& provenance, const BlockDistribution& dist_x,
                      const CheckpointState& state, bool with_error);
// Collective over f's communicator: checks that f is a checkpoint of this problem (kind, problem
// attributes, the field's shape) without reading the field; returns its step. InputError naming
// the file and what differs.
std::int64_t inspect_checkpoint(const io::H5File& f, const Config& c, const Initial& init);
// Collective over comm: reads and checks a checkpoint against the problem of this run.
CheckpointState read_checkpoint(const std::string& path, MPI_Comm comm, const Config& c,
                                const Initial& init, const BlockDistribution& dist_x);

} // namespace tessera::heat2d
