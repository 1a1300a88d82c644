// N-dimensional HDF5 datasets of f64 or i64 elements, such as heat2d's snapshot series
// /fields/u [nsnap, ny, nx] (extendible along the first dimension) and 1-D time series. The 2-D
// matrix layer (io/h5_matrix.hpp) covers matrices of the four dtypes; both move boxes through
// the same transfer (io/h5_box.hpp): collective when the file is open with MPI-IO, ranks in
// turn otherwise (io/h5_turns.hpp). Every function is collective over the file's communicator and
// throws on every rank when it fails on one. Call them on the I/O thread only.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/h5_box.hpp"
#include "io/h5_file.hpp"

namespace tessera::io::nd {

enum class Elem { f64, i64 };

using io::Box;
using io::Dims;

struct CreateOptions {
  Dims max_dims; // empty: fixed size; H5S_UNLIMITED along a dimension makes it extendible
  Dims chunk;    // required when extendible
};

void create(H5File& f, const std::string& path, Elem e, const Dims& dims,
            const CreateOptions& opts = {});
// Sets the current size of an extendible dataset.
void extend(H5File& f, const std::string& path, const Dims& dims);
// The current size; InputError naming the dataset when it is missing.
Dims dims(const H5File& f, const std::string& path);
bool exists(const H5File& f, const std::string& path);

void write(H5File& f, const std::string& path, Elem e, const Box& mine, const void* buf);
void read(const H5File& f, const std::string& path, Elem e, const Box& mine, void* buf);

// Whole 1-D datasets: created and written with rank 0's values; read by every rank.
void write_vector(H5File& f, const std::string& path, const std::vector<double>& v);
void write_vector(H5File& f, const std::string& path, const std::vector<std::int64_t>& v);
std::vector<double> read_f64_vector(const H5File& f, const std::string& path);
std::vector<std::int64_t> read_i64_vector(const H5File& f, const std::string& path);

} // namespace tessera::io::nd
