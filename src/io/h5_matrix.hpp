// Row-block hyperslab reads and writes of 2-D datasets, collective when HDF5 is parallel
// (H5FD_MPIO_COLLECTIVE); with a serial HDF5 the ranks take turns on the same file format.
#pragma once

#include <cstdint>
#include <string>

#include "core/block_distribution.hpp"
#include "core/dtype.hpp"
#include "io/h5_file.hpp"

namespace tessera::io {

struct DatasetInfo {
  Shape shape;
  DType dtype;
};

struct WriteOptions {
  std::int64_t chunk_rows = 0; // 0: contiguous layout
  std::int64_t chunk_cols = 0;
  int deflate = 0; // 0: no compression; 1–9 with chunking
};

// Collective. Throws InputError on every rank naming the dataset when it is missing, not 2-D,
// or of an element type tessera cannot handle.
DatasetInfo inspect_dataset(const H5File& f, const std::string& path);

// Collective. Reads rows [dist.begin(rank), dist.end(rank)) into `buf` (converting to `dtype`).
void read_rows(const H5File& f, const std::string& path, const BlockDistribution& dist, int rank,
               DType dtype, void* buf);

// Collective. Creates the dataset (and parent groups) of dist.global() and writes this rank's
// rows from `buf`.
void write_rows(H5File& f, const std::string& path, const BlockDistribution& dist, int rank,
                DType dtype, const void* buf, const WriteOptions& opts = {});

// True when the last collective transfer on this process really was collective (tests check
// H5Pget_mpio_no_collective_cause); always true for a serial build that takes turns.
bool last_transfer_was_collective() noexcept;

} // namespace tessera::io
