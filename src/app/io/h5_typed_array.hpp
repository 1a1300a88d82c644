// N-D datasets of any element type tessera moves (core/dtype.hpp: the floating and complex
// types and the integers of 8 to 64 bits): inspected, created and moved box by box through
// io/h5_box.hpp, collectively when the file is open with MPI-IO, in turns otherwise. The
// permutation of dimensions reads and writes through this layer; io/h5_array.hpp stays the
// f64/i64 layer of the solver's series. Every function is collective over the file's
// communicator and throws on every rank when it fails on one.
#pragma once

#include <string>

#include "core/dtype.hpp"
#include "io/h5_box.hpp"
#include "io/h5_file.hpp"

namespace tessera::io::nd {

struct ArrayInfo {
  Dims dims;   // the current extent, outermost first
  DType dtype; // what the file's element type is read as, unconverted
};

// InputError naming the dataset when it is missing, a scalar, of rank above 8, or of an
// element type tessera cannot move (strings, compounds other than complex, floats other than
// 32 or 64 bits).
ArrayInfo inspect_array(const H5File& f, const std::string& path);

// A fixed-size, contiguous dataset (and its parent groups) stored as tessera writes `dtype`
// (io/h5_type.hpp); InputError when `path` exists.
void create_array(H5File& f, const std::string& path, DType dtype, const Dims& dims);

// This rank's `box` between the dataset and a row-major buffer of its counts, in `dtype`'s
// memory type. A box with a zero count moves nothing; the rank still takes part.
void read_array(const H5File& f, const std::string& path, DType dtype, const Box& box, void* buf);
void write_array(H5File& f, const std::string& path, DType dtype, const Box& box, const void* buf);

} // namespace tessera::io::nd
