// Out-of-core (streamed) operations on HDF5 datasets in bounded memory: the dataset goes through
// a fixed set of chunk buffers per rank, read ahead and written behind by one I/O thread per
// rank while the ranks compute, so datasets larger than the memory of all ranks work.
//
//   tessera::transpose_out_of_core("a.h5", "/A", "at.h5", "/AT", MPI_COMM_WORLD);
//   tessera::ReduceResult r = tessera::reduce_out_of_core(
//       "a.h5", "/A", {tessera::Op::Sum, tessera::Op::Max}, tessera::Axis::All, MPI_COMM_WORLD);
//
// Results equal the in-memory plans' bit for bit. Both calls are collective and need MPI
// initialised with MPI_THREAD_MULTIPLE (the I/O thread calls MPI-IO while the ranks exchange):
// with less they throw MpiError on every rank, saying so, before touching any file.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include <tessera/backend.hpp>
#include <tessera/export.h>
#include <tessera/reduction.hpp>
#include <tessera/transpose_plan.hpp>

namespace tessera {

struct OutOfCoreOptions {
  // Host memory per rank for the chunk buffers (0: 256 MiB); the chunk size follows from it.
  std::size_t memory_limit = 0;
  // Chunks in flight per direction besides the one being computed (>= 1).
  int staging_depth = 1;
  Backend backend = Backend::Auto;    // kernels of the transpose and the reductions
  Exchange exchange = Exchange::Auto; // the transpose's exchange algorithm
  // Reductions skip the elements the dataset's _FillValue and missing_value attributes name,
  // decode packed data (scale_factor, add_offset), and skip NaN unless keep_nan is set (IEEE
  // semantics: a NaN makes its results NaN).
  bool keep_nan = false;
};

// Collective. Writes the transpose of in_file:in_dataset (M×N, any element type) to
// out_file:out_dataset (N×M, the same type), with the input's attributes, fill value, dimension
// scales (swapped) and global attributes, as `tessera transpose` writes it. out_file is created
// (an existing one is replaced once the new one is complete) and must not be in_file.
TESSERA_API void transpose_out_of_core(const std::string& in_file, const std::string& in_dataset,
                                       const std::string& out_file, const std::string& out_dataset,
                                       MPI_Comm comm, const OutOfCoreOptions& options = {});

// Collective. The reductions `ops` of file:dataset (f32 or f64, or packed integers) along
// `axis`, skipping missing values (OutOfCoreOptions::keep_nan); the same values on every rank.
TESSERA_API ReduceResult reduce_out_of_core(const std::string& file, const std::string& dataset,
                                            const std::vector<Op>& ops, Axis axis, MPI_Comm comm,
                                            const OutOfCoreOptions& options = {});

} // namespace tessera
