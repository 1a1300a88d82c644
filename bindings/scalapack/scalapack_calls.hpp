// ScaLAPACK's redistribution and transposition calls (pxgemr2d, pxtran, pxtranu, pxtranc) on
// top of RedistributePlan, with ScaLAPACK's conventions: descriptors, 1-based sub-matrix
// corners, column-major local blocks, BLACS contexts. The Fortran-named symbols
// (fortran_names.cpp) are thin wrappers; tests call these directly beside the real ScaLAPACK.
#pragma once

#include <tessera/redistribute_plan.hpp>

#include "plan_cache.hpp"

namespace tessera::scalapack {

// B(ib:ib+m-1, jb:jb+n-1) = beta·B + alpha·op(A)(ia:…, ja:…), 1-based; under a transpose A's
// sub-matrix is n × m. `context` is a BLACS context spanning every process of both grids
// (pxgemr2d's ictxt; pxtran's A context). Collective over that context's processes.
template <class T>
void redistribute(int m, int n, T alpha, const T* a, int ia, int ja, const int* desca, T beta, T* b,
                  int ib, int jb, const int* descb, MatrixOp op, int context);

// The plans of the last `capacity` distinct calls are kept (16 unless set; 0 keeps none). Every
// process of a context must set the same value.
void set_plan_cache_capacity(int capacity);
PlanCacheStats plan_cache_stats();

} // namespace tessera::scalapack
