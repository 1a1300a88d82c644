// What a transpose carries over from its input dataset to its output: the dataset's attributes
// (units, long_name, _FillValue, …, whatever their type), its fill value, and, on request, its
// storage (chunk shape, gzip level, shuffle), read from one file and written to another.
//
// Every function is collective over the file's communicator and throws on every rank when it
// fails on one.
#pragma once

#include <hdf5.h>

#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "io/h5_file.hpp"
#include "io/h5_handle.hpp"
#include "io/h5_matrix.hpp"

namespace tessera::io {

// Attributes of one dataset, held in memory between two files.
class DatasetAttributes {
public:
  // Every attribute of `dataset` (or of the root group, "/": a file's global attributes such
  // as netCDF's title and history), except those HDF5's dimension scales and netCDF-4 manage
  // (DIMENSION_LIST, REFERENCE_LIST, CLASS, NAME, _Netcdf4Dimid, _Netcdf4Coordinates: they
  // refer to objects of the input file; _NCProperties, the netCDF library's own) and those holding
  // object references or variable-length sequences other than strings; `skipped` names what was
  // left out.
  static DatasetAttributes read(const H5File& f, const std::string& dataset);
  // Writes them onto `dataset` of `f`, but for those named in `except`. An attribute of the
  // same name is replaced, or with Existing::Keep kept (global attributes carried into a file
  // appended to leave its own alone: its title, its history).
  enum class Existing { Replace, Keep };
  void write(H5File& f, const std::string& dataset, const std::vector<std::string>& except = {},
             Existing existing = Existing::Replace) const;

  std::vector<std::string> names() const;
  const std::vector<std::string>& skipped() const noexcept { return skipped_; }

private:
  struct Attribute {
    std::string name;
    unique_hid type;                  // a transient copy of the file type
    std::vector<hsize_t> dims;        // empty: scalar
    std::vector<unsigned char> raw;   // fixed-size types, in the file's representation
    std::vector<std::string> strings; // variable-length strings
    bool vlen_string = false;
  };
  std::vector<Attribute> attrs_;
  std::vector<std::string> skipped_;
};

// The storage of a dataset as WriteOptions for a dataset of the same element type `dtype`:
// chunk shape (chunk, empty when contiguous; for a 2-D dataset also chunk_rows x chunk_cols,
// 0 x 0 when contiguous), gzip level and shuffle, and its user-defined fill value
// (empty when HDF5's default). `dropped` names the filters tessera cannot write (szip, other
// plugins), which are left out.
struct DatasetStorage {
  WriteOptions options;
  std::vector<std::string> dropped;
};
DatasetStorage dataset_storage(const H5File& f, const std::string& dataset, DType dtype);

} // namespace tessera::io
