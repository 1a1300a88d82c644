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
#include "io/h5_matrix.hpp"

namespace tessera::io::nd {

struct ArrayInfo {
  Dims dims;   // the current extent, outermost first
  DType dtype; // what the file's element type is read as, unconverted
};

// InputError naming the dataset when it is missing, a scalar, of rank above 8, or of an
// element type tessera cannot move (strings, compounds other than complex, floats other than
// 32 or 64 bits).
ArrayInfo inspect_array(const H5File& f, const std::string& path);

// The chunk shape of an array of `dims` written with `o`; empty for the contiguous layout.
// o.chunk when given (each entry capped at its extent); else, when o asks for chunks
// (chunk_rows, deflate or shuffle), the innermost dimension whole, the dimensions between it
// and the outermost whole while the chunk stays within about 1 MiB (the first that does not fit
// cut to fit), and o.chunk_rows of the outermost (0: as many as fill about 1 MiB), at most 4 GiB
// in all. A rank-2 array gets the chunks of a matrix written with the same options.
Dims chunk_dims(const Dims& dims, DType dtype, const WriteOptions& o);

// A fixed-size dataset (and its parent groups) stored as tessera writes `dtype`
// (io/h5_type.hpp): contiguous, or chunked with the filters and fill value of `o`
// (chunk_dims); InputError when `path` exists or a chunk shape or gzip level is out of range.
void create_array(H5File& f, const std::string& path, DType dtype, const Dims& dims,
                  const WriteOptions& o = {});

// This rank's `box` between the dataset and a row-major buffer of its counts, in `dtype`'s
// memory type. A box with a zero count moves nothing; the rank still takes part.
void read_array(const H5File& f, const std::string& path, DType dtype, const Box& box, void* buf);
void write_array(H5File& f, const std::string& path, DType dtype, const Box& box, const void* buf);

} // namespace tessera::io::nd
