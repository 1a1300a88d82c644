// HDF5 datatypes of tessera's element types, and recognising them in files.
//
// f32 / f64 are IEEE floats (little-endian in files). Complex numbers are the compound {r, i}
// of two floats — the layout h5py writes by default for numpy's complex64 / complex128 — so
// numpy, h5py and tessera read each other's files. std::complex<T> has exactly that layout
// in memory (two T, real first). Integers (i8 … u64) are stored little-endian, as their width
// and sign say.
#pragma once

#include <hdf5.h>

#include <optional>
#include <string>

#include "core/dtype.hpp"
#include "io/h5_handle.hpp"

namespace tessera::io {

// The in-memory (native) type of t, for H5Dread / H5Dwrite.
unique_hid h5_memory_type(DType t);
// The type stored in files tessera writes.
unique_hid h5_file_type(DType t);

template <class T>
unique_hid h5_type() {
  return h5_memory_type(dtype_of<T>);
}

// The DType of a file's element type, or nullopt when tessera cannot handle it.
std::optional<DType> dtype_of_h5_type(hid_t type);
// A short description of any HDF5 type for messages: "32-bit signed integer", "string",
// "compound {x, y, z}", "f64".
std::string describe_h5_type(hid_t type);

} // namespace tessera::io
