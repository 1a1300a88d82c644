// The pieces of reduce_out_of_core (src/app/ops/out_of_core_reduce.cpp): one streaming pass over
// the dataset, and the Norm2 rescue (core/reduction.hpp) that may add two more.
#pragma once

#include <mpi.h>

#include <vector>

#include "core/dtype.hpp"
#include "core/reduction.hpp"
#include "mpi/norm2_rescue.hpp"
#include "ops/out_of_core.hpp"

namespace tessera::ops::detail {

struct ReducePass {
  ReduceResult result;
  DType dtype = DType::f64; // the dataset's
  OutOfCoreReport report;
};

// Collective. The reductions `ops` of `in` along `axis` in one pass; with `rescue`, the Norm2
// rescue's pass instead (ops must be {Norm2}, the data f64): the norms of the scaled squares
// with those exponents, Norm2Exponents::rows indexed by global row and ::cols by column.
// `extra`: a pass that the rescue adds (its chunk geometry is not logged again).
ReducePass reduce_pass(const io::DatasetRef& in, const std::vector<Op>& ops, Axis axis,
                       const OutOfCoreOptions& options, MPI_Comm comm, const Norm2Exponents* rescue,
                       bool extra = false);

// Collective. The Norm2 rescue of a finished first pass: recomputes, with more passes, the norms
// in done.result that need it; their times and bytes are added to done.report.
void rescue_norm2(const io::DatasetRef& in, Axis axis, const OutOfCoreOptions& options,
                  MPI_Comm comm, ReducePass& done);

} // namespace tessera::ops::detail
