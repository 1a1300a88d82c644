// `tessera transpose IN:/var OUT:/var --axes …`: a permutation of the dimensions of an HDF5 /
// netCDF-4 variable of rank 1 to 8 and any element type, into a new dataset of the same type,
// distributed over the ranks without an exchange (ops/permute_pieces.hpp) and bounded by a
// memory limit. The output carries the input's metadata (ops/permute_metadata.hpp) and is
// written as every tessera output is: a temporary renamed when complete (io/h5_file.hpp).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/timers.hpp"
#include "io/dataset_ref.hpp"
#include "io/h5_file.hpp"
#include "io/h5_typed_array.hpp"
#include "io/provenance.hpp"

namespace tessera::ops {

// The input, opened before any output exists: its extent, element type and dimension names.
struct ArrayInput {
  io::DatasetRef ref;
  std::optional<io::H5File> file;
  io::nd::ArrayInfo info;
  std::vector<std::string> dim_names;
  std::vector<std::int64_t> shape() const;

  // Collective; throws on every rank naming the dataset when the file or the dataset is missing,
  // of an element type tessera cannot move, or empty.
  static ArrayInput open(const io::DatasetRef& ref, MPI_Comm comm);
};

struct PermuteOptions {
  std::vector<int> axes;        // output dimension k is input dimension axes[k]
  std::size_t memory_limit = 0; // per rank, for the four buffers; 0: 256 MiB, as streaming
  io::H5File::Mode mode = io::H5File::Mode::Replace;
  const io::Provenance* provenance = nullptr;
  // Phases "read", "permute", "write", and the waits of each side on the other.
  PhaseTimers* timers = nullptr;
  io::WriteOptions write{}; // the output's chunks, filters and fill value (permuted_storage)
  // Cpu, or Cuda: each piece copied to this rank's GPU, permuted there (cuda/permute.hpp) and
  // copied back, through pinned buffers. Resolved before the call (never Auto).
  Backend backend = Backend::Cpu;
};

struct PermuteReport {
  std::vector<std::int64_t> shape; // of the output
  std::int64_t pieces = 0;         // per rank
  std::size_t buffer_bytes = 0;    // per rank
  double seconds = 0;
};

// Collective. Reads `in` (closed on return), writes `out` and commits its file.
PermuteReport permute_dataset(ArrayInput& in, const io::DatasetRef& out, const PermuteOptions& o,
                              MPI_Comm comm);

} // namespace tessera::ops
