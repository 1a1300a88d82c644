// What a transpose carries from its input to its output besides the numbers: the input
// dataset's attributes (units, _FillValue, scale_factor, … : packed data stays packed) and fill
// value, its dimension scales swapped (each coordinate with its values, stored type and
// attributes), the input file's global attributes, and with like_input its chunking and
// filters. Read from the input before the output is created, written onto the output before
// it is committed; `tessera transpose` and the library's transpose_out_of_core share it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/dataset_ref.hpp"
#include "io/h5_attribute_copy.hpp"
#include "io/h5_dimension_scales.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"

namespace tessera::ops {

struct TransposeMetadata {
  io::DatasetAttributes attributes; // of the input dataset
  io::DatasetAttributes globals;    // of the input file's root group
  io::WriteOptions write;           // the output's layout and fill value
  struct Scale {
    io::DimensionScale scale; // of the input's dimension 1 - k for the output's dimension k
    io::VectorValues values;
    io::DatasetAttributes attributes; // units, long_name, axis, …
  };
  std::vector<Scale> scales; // output dimension 0, then 1; an empty path: none

  // Collective. `flags`: the output layout asked for; with like_input, the input's chunk shape
  // (transposed), gzip level and shuffle where a flag does not say otherwise. Warnings (filters
  // or attributes left out) are logged by `rank` 0.
  static std::shared_ptr<const TransposeMetadata>
  read(const io::H5File& in, const io::DatasetRef& ref, const io::DatasetInfo& info,
       const io::WriteOptions& flags, bool like_input, int rank);
  // Collective. On the output dataset `out`, once written: the input's attributes, then
  // transpose_of = "IN:/A", and the dimension scales swapped (each coordinate copied to the path
  // it had in the input, unless the output has it already: from an earlier dataset of the same
  // call, or of a file appended to); on the root, the input file's global attributes that the
  // output does not have already (tessera's provenance, written later, wins).
  void write_to(io::H5File& f, const io::DatasetRef& out, const io::DatasetRef& in) const;
  // Collective. The same for an untransposed copy of the input at `path` (the pipeline job's
  // /input): the attributes, and the dimension scales in the input's order.
  void write_copy_to(io::H5File& f, const std::string& path) const;

private:
  // Attaches scales[k] to dimension (transposed ? k : 1 - k) of `path`.
  void attach_scales(io::H5File& f, const std::string& path, bool transposed) const;
};

} // namespace tessera::ops
