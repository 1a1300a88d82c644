// `tessera reduce IN:/var --dims lat,lon --op … --output OUT.h5`: reductions of an N-D variable
// over a set of its dimensions, one variable per op over the dimensions kept (in the input's
// order, with their dimension scales and coordinates), at OUT:/var_op.
//
// The array is seen as a matrix whose rows are the kept dimensions and whose columns are the
// reduced ones (both in the input's order): each value is the canonical row value of
// core/reduction.hpp over the reduced elements, missing values skipped and packed data decoded
// as `--axis rows` does (mpi/reduce_masked.hpp), f64 norms that overflowed or underflowed
// rescued as there. A row never spans two ranks or two pieces, so the bits do not depend on the
// rank count, the thread count or the memory limit. The ranks split the first kept dimension
// (ops/permute_pieces.hpp) and exchange nothing (but the values --json prints).
//
// The statistics beyond the 2-D reduce's ops, as numpy and xarray define them:
//   var, std  two passes: the mean m of the row's valid elements, then the canonical row sum
//             of (x - m)² over them, divided by n - ddof (ddof 0: the population variance, as
//             numpy's default); NaN when n - ddof <= 0. std is its square root.
//   argmin, argmax  the position of the row's smallest (largest) valid element, the first one
//             on ties, as one index per reduced dimension (xarray's argmin(dim=[…]); numpy's
//             flat index over the reduced dimensions is np.ravel_multi_index of them): one int64
//             variable var_argmin_DIM per reduced dimension. A NaN that is not skipped
//             (--keep-nan) wins, as in numpy; a row without valid elements gives -1, the
//             variables' _FillValue.
#pragma once

#include <mpi.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/reduction.hpp"
#include "io/h5_matrix.hpp"
#include "ops/permute_dataset.hpp"

namespace tessera::ops {

// The ops over dimensions: those of the 2-D reduce, and the statistics above.
enum class DimsOp { Sum, Mean, Min, Max, Norm1, Norm2, NormInf, Count, Var, Std, ArgMin, ArgMax };

std::string_view dims_op_name(DimsOp op) noexcept;
// "sum,var,argmax": InputError naming the op and the ones there are otherwise.
std::vector<DimsOp> parse_dims_ops(std::string_view list);
// True for var, std, argmin and argmax, which only --dims computes.
bool dims_only(std::string_view op_name) noexcept;

struct ReduceDimsOptions {
  std::vector<int> reduced; // input dimensions reduced over
  std::vector<DimsOp> ops;
  int ddof = 0;          // var and std divide by n - ddof
  MissingValues missing; // of the input (io/missing_values.hpp)
  std::string output;    // the output file; empty: none is written (the values only, gathered)
  io::H5File::Mode mode = io::H5File::Mode::Replace; // Append: added to the file's datasets
  io::WriteOptions write{}; // chunks and filters of the outputs (io::nd::chunk_dims)
  bool gather = false;      // every rank gets every value (ReduceDimsReport::Output::values)
  std::size_t memory_limit = 0;
  const io::Provenance* provenance = nullptr;
  PhaseTimers* timers = nullptr;
};

struct ReduceDimsReport {
  std::vector<std::int64_t> shape;        // of each output variable
  std::vector<std::string> kept_names;    // their dimensions' names ("dim3" where unnamed)
  std::vector<std::string> reduced_names; // the reduced dimensions' names
  struct Output {
    DimsOp op;
    std::string dim;            // argmin, argmax: the reduced dimension whose index this is
    std::string path;           // the variable's path in the output
    DType dtype;                // f64, or i64 for the indices
    std::vector<double> values; // row-major over `shape`, with ReduceDimsOptions::gather
  };
  std::vector<Output> outputs; // in the order of the ops
  double seconds = 0;
};

// Collective. InputError (on every rank, before any output exists) for no dimension kept or
// none reduced, a negative ddof, or data that is neither f32, f64 nor packed.
ReduceDimsReport reduce_dims(ArrayInput& in, const ReduceDimsOptions& o, MPI_Comm comm);

} // namespace tessera::ops
