// The matrix a command or the pipeline job works on: a dataset opened once — the decision in
// memory or streamed (ops/out_of_core_choice.hpp) and the in-memory read (ops/host_matrix.hpp)
// share the open file and what it holds — or a matrix to generate. A streamed run closes the
// file first: its I/O thread opens the input itself, after it starts watching it for changes
// (io/input_watch.hpp), and is then the only thread that calls HDF5.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "io/dataset_ref.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io/missing_values.hpp"

namespace tessera::ops {

struct MatrixInput {
  std::optional<io::DatasetRef> ref; // none: a generated matrix
  std::optional<io::H5File> file;    // the open input, until close() or the in-memory read
  io::DatasetInfo info;              // shape and element type (read as)
  MissingValues missing;             // what reductions skip and decode (open_for_reduction)

  // Collective: opens and inspects `ref`; throws on every rank naming the file or dataset when
  // it is missing or not a 2-D dataset of f32, f64, c64 or c128.
  static MatrixInput open(const io::DatasetRef& ref, MPI_Comm comm);
  // Collective: open() for a reduction, with the dataset's missing values and packing
  // (io/missing_values.hpp; NaN skipped unless keep_nan). Packed data, integer or not, is read
  // as f64, the type it is decoded in.
  static MatrixInput open_for_reduction(const io::DatasetRef& ref, MPI_Comm comm, bool keep_nan);
  // A matrix generated in memory: no file.
  static MatrixInput generated(Shape shape, DType dtype);

  bool from_file() const noexcept { return ref.has_value(); }
  // "in.h5:/A", or "the generated matrix", for messages.
  std::string name() const;
  // Collective: closes the file (a streamed run opens it again on its I/O thread).
  void close();
};

} // namespace tessera::ops
