// What a permutation of dimensions carries from its input to its output besides the numbers:
// the variable's attributes as they are (units, _FillValue, scale_factor and add_offset: packed
// integers stay packed), the input file's global attributes, and the dimension scales in the
// output's order, each coordinate variable copied with its values, stored type and attributes,
// so that netCDF4 and xarray read the output's dimensions permuted. Read from the input before
// the output exists, written onto the output before it is committed.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/dataset_ref.hpp"
#include "io/h5_attribute_copy.hpp"
#include "io/h5_dimension_scales.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"

namespace tessera::ops {

// The name of each dimension of `dataset`: a netCDF dimension's (the name of its scale dataset),
// else the scale's or the dimension's label; empty where there is none. Collective.
std::vector<std::string> dimension_names(const io::H5File& f, const std::string& dataset);

// How a permutation's output is stored: chunk_rows, deflate and shuffle as `flags` asks; with
// like_input the input's chunk shape (permuted: output dimension k takes the chunk extent of
// input dimension axes[k]) unless flags.chunk_rows is given, and its gzip level and shuffle
// where a flag does not say otherwise; always the input's fill value (an element of `dtype`).
// Collective; warnings (filters that cannot be written) are logged by `rank` 0.
io::WriteOptions permuted_storage(const io::H5File& in, const io::DatasetRef& ref, DType dtype,
                                  std::span<const int> axes, const io::WriteOptions& flags,
                                  bool like_input, int rank);

struct PermuteMetadata {
  io::DatasetAttributes attributes; // of the input dataset
  io::DatasetAttributes globals;    // of the input file's root group
  struct Scale {
    io::DimensionScale scale; // of input dimension axes[k], for output dimension k
    io::VectorValues values;
    io::DatasetAttributes attributes;
  };
  std::vector<Scale> scales; // one per output dimension; an empty path: none

  // Collective; warnings (attributes left out) are logged by `rank` 0.
  static std::shared_ptr<const PermuteMetadata>
  read(const io::H5File& in, const io::DatasetRef& ref, std::span<const int> axes, int rank);
  // Collective. On the written output dataset `out`: the input's attributes, transpose_of =
  // "IN:/var", the scales in the output's order (each coordinate copied to the path it had in
  // the input unless the output has it already); on the root the input's global attributes.
  void write_to(io::H5File& f, const io::DatasetRef& out, const io::DatasetRef& in) const;
  // Collective. The scales alone (each coordinate copied unless the output has it already),
  // for outputs that are not the input's values (reductions over some dimensions).
  void write_scales(io::H5File& f, const std::string& out) const;
};

} // namespace tessera::ops
