// Provenance attributes on an output file's root group (DESIGN.md "I/O"): software, version,
// git hash, date, command line, effective deck, ranks, threads, backend, GPU names and
// MPI / HDF5 / CUDA versions.
#pragma once

#include <string>
#include <vector>

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

// Collective; fills in software, version, git hash, date and library versions itself.
void write_provenance(H5File& f, const Provenance& p);

// Collective string / integer / double attributes on an object (group or dataset path).
void write_attribute(H5File& f, const std::string& object, const std::string& name,
                     const std::string& value);
void write_attribute(H5File& f, const std::string& object, const std::string& name,
                     long long value);
void write_attribute(H5File& f, const std::string& object, const std::string& name, double value);

// Library versions for `tessera info` and provenance.
std::string hdf5_version();
bool hdf5_is_parallel() noexcept;

} // namespace tessera::io
