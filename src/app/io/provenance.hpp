// Provenance attributes on an output file's root group (docs/output.md).
//
// Root attributes of every tessera output file (strings are variable-length UTF-8; h5py reads
// them as str):
//   software       "tessera"
//   version        tessera's version, e.g. "0.1.0"
//   git_hash       the commit it was built from ("unknown" outside a git checkout)
//   date           when the file was written, ISO 8601 UTC: "2025-01-31T12:34:56Z"
//   history        "DATE COMMAND_LINE" of this run, then the lines the file had (a file appended
//                  to) or inherited from its input's global attributes, newest first (netCDF's
//                  convention)
//   command_line   the command as typed
//   deck           the effective deck as TOML text ("" for commands that take none)
//   ranks          MPI ranks (64-bit integer)
//   threads        OpenMP threads per rank (64-bit integer)
//   backend        "cpu" or "cuda"
//   gpus           GPU names of a cuda run, comma-separated ("" for a cpu run)
//   mpi_library    first line of MPI_Get_library_version
//   hdf5_version   e.g. "1.10.8"
//   hdf5_parallel  1 when the HDF5 library is parallel, else 0 (64-bit integer)
//   hdf5_io        how this file was written: "collective" (MPI-IO) or "serial" (ranks in turn)
//   cuda_runtime   CUDA runtime version built with, "" without CUDA
//   complete       1, written last by H5File::commit() (io/h5_file.hpp)
#pragma once

#include <string>
#include <vector>

#include "io/h5_attribute.hpp"
#include "io/h5_file.hpp"

namespace tessera::io {

struct Provenance {
  std::string command_line;
  std::string deck; // the effective deck as TOML text ("" when the command takes none)
  std::string backend;
  int ranks = 1;
  int threads = 1;
  std::vector<std::string> gpus;
};

// Collective; fills in software, version, git hash, date and library versions itself. Values
// are rank 0's (the date, say, is the same on every rank).
void write_provenance(H5File& f, const Provenance& p);

// write_attribute (string / integer / double, collective) lives in io/h5_attribute.hpp.

// Library versions for `tessera info` and provenance.
std::string hdf5_version();
bool hdf5_is_parallel() noexcept;
// The first line of MPI_Get_library_version, e.g. "Open MPI v4.1.4, package: …".
std::string mpi_library_version();
// Now as ISO 8601 UTC: "2025-01-31T12:34:56Z".
std::string iso8601_utc_now();

} // namespace tessera::io
