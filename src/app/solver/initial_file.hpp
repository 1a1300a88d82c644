// An initial state read from an HDF5 file: initial.kind = "FILE.h5:/path" (a 2-D dataset
// [ny, nx]) or "FILE.h5:/path[k]" (slab k of a 3-D dataset [n, ny, nx], such as snapshot k of a
// heat2d output's /fields/u; [-1] is the last). A slab starts the run at its time, taken from the
// dataset `time` beside it (a heat2d output's /fields/time), which must be a whole number of time
// steps; without one the run starts at step 0.
//
// Collective over the file's communicator (on the I/O thread while a run has one); every rank
// throws the same InputError, naming initial.kind, for what does not fit the problem.
#pragma once

#include <cstdint>
#include <string>

#include "core/block_distribution.hpp"
#include "io/h5_file.hpp"
#include "solver/fields.hpp"
#include "solver/heat2d_config.hpp"

namespace tessera::heat2d {

struct InitialSource {
  std::int64_t slab = -1;      // the slab read (>= 0), -1 for a 2-D dataset
  std::int64_t start_step = 0; // the step the run starts at
};

// Checks the dataset (present, 2-D [ny, nx] or, with [k], 3-D [n, ny, nx] with k in range, of a
// floating-point type) and finds the step the run starts at.
InitialSource inspect_initial(const io::H5File& f, const Initial& init, const Config& c);

// Reads this rank's rows of layout X (dist_x) of the state `src` describes.
void read_initial_rows(const io::H5File& f, const Initial& init, const InitialSource& src,
                       const BlockDistribution& dist_x, int rank, double* rows);

} // namespace tessera::heat2d
