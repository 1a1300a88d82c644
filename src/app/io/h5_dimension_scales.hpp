// HDF5 dimension scales (H5DS, the high-level library): 1-D coordinate datasets attached to the
// dimensions of a dataset, the way netCDF-4 stores coordinate variables, so that h5py
// (`dset.dims`), netCDF4, xarray, ParaView and VisIt show named dimensions with coordinates.
//
// Every function is collective over the file's communicator and throws on every rank when it
// fails on one: InputError naming the dataset for what the file does not hold, IoError when HDF5
// fails.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/h5_file.hpp"

namespace tessera::io {

// Makes the 1-D dataset `scale` a dimension scale called `name` (H5DSset_scale), attaches it
// to dimension `dim` of `dataset` and labels that dimension `name`. The scale's length must be
// the dimension's (an extendible dimension may still be shorter).
void attach_dimension_scale(H5File& f, const std::string& dataset, unsigned dim,
                            const std::string& scale, const std::string& name);

// Makes `link` a second name of the existing object `existing` (an HDF5 hard link; parent groups
// are created). netCDF-4 and xarray find a dimension only in the variable's own group or above
// it, so a scale kept elsewhere gets a name there.
void link_object(H5File& f, const std::string& existing, const std::string& link);

struct DimensionScale {
  std::string path; // the scale dataset; empty when none is attached to the dimension
  std::string name; // the scale's name (H5DSget_scale_name), else the dimension's label
};

// For each dimension of `dataset`, the first scale attached to it.
std::vector<DimensionScale> dimension_scales(const H5File& f, const std::string& dataset);

// The values of a 1-D dataset, as 64-bit floats, or 64-bit integers for an integer dataset: a
// coordinate read from one file, to write to another. `bytes` and `is_signed` are the stored
// type's, so that the copy is stored as the original was (an int32 time axis stays int32, an
// f32 latitude f32).
struct VectorValues {
  bool integer = false;
  std::size_t bytes = 8;
  bool is_signed = true;
  std::vector<double> reals;
  std::vector<std::int64_t> ints;
};
VectorValues read_vector_values(const H5File& f, const std::string& path);
// Creates the 1-D dataset `path` (and its parent groups) holding `v`; InputError when it exists.
void write_vector_values(H5File& f, const std::string& path, const VectorValues& v);

} // namespace tessera::io
