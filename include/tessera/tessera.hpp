// tessera: distributed dense matrices and N-D arrays. One include gives the whole C++ API:
//   Shape, BlockDistribution, DType           tessera/shape.hpp, block_distribution.hpp, dtype.hpp
//   Backend, Memory                           tessera/backend.hpp
//   TransposePlan, TransposeOptions, Exchange tessera/transpose_plan.hpp, exchange.hpp
//   ReducePlan, Op, Axis, ReduceResult        tessera/reduce_plan.hpp, reduction.hpp
//   Layout, BlockCyclicSpec                   tessera/layout.hpp
//   RedistributePlan, RedistributeOptions     tessera/redistribute_plan.hpp
//   PermutePlan, PermuteOptions, PermuteBlock tessera/permute_plan.hpp
//   h5::read_rows, h5::write_rows, h5::Writer tessera/hdf5.hpp
//   transpose_out_of_core, reduce_out_of_core tessera/out_of_core.hpp
//   Heat2dSolver, Heat2dSettings              tessera/heat2d.hpp
//   Error and its kinds                       tessera/error.hpp
//   set_log_level, set_log_sink, version      tessera/log.hpp
// The application initialises and finalises MPI; tessera never does, never exits, prints
// nothing unless asked (tessera/log.hpp) and reports every failure as a tessera::Error.
// docs/library.md is the guide.
#pragma once

#include <tessera/agreement.hpp>
#include <tessera/backend.hpp>
#include <tessera/block_distribution.hpp>
#include <tessera/communicator.hpp>
#include <tessera/dtype.hpp>
#include <tessera/error.hpp>
#include <tessera/hdf5.hpp>
#include <tessera/heat2d.hpp>
#include <tessera/layout.hpp>
#include <tessera/log.hpp>
#include <tessera/out_of_core.hpp>
#include <tessera/permute_plan.hpp>
#include <tessera/redistribute_plan.hpp>
#include <tessera/reduce_plan.hpp>
#include <tessera/reduction.hpp>
#include <tessera/shape.hpp>
#include <tessera/transpose_plan.hpp>
