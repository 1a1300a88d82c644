// The x-lines of the heat2d step on several GPU ranks, solved where they lie (solver.line_solve =
// "distributed"): the local work of DistributedTridiag (mpi/distributed_tridiag.hpp) on the
// device, with the same operations in the same order, so that the GPU gives the CPU's bits. The
// host keeps the reduced system: it sends the two right-hand sides per line and rank, solves the
// small system and hands back four rows of values per line (the rank's first and last points and
// the neighbours' points next to them).
//
// Lines are the columns of an L × lines block (point m of line s at x[m * lines + s]): consecutive
// threads take consecutive lines, every access is coalesced.
#pragma once

#include <cstdint>

#include "core/backend_fn.hpp"

struct CUstream_st;

namespace tessera::cuda {

// DistributedTridiag::Factors on the device (L values each).
struct DistributedLineFactors {
  const double* a = nullptr;
  const double* c = nullptr;
  const double* inv = nullptr;
  const double* cp = nullptr;
  const double* p = nullptr;
  const double* q = nullptr;
  std::int64_t points = 0; // L, this rank's points per line
  std::int64_t lines = 0;
};

// The Dirichlet boundary term hg added to point 0 (add_first) and then to point L - 1 (add_last),
// then DistributedTridiag::prepare on x in place: the interior sweeps, and the right-hand sides
// of the reduced system into rhs (2 × lines: the first points', then the last points').
TESSERA_CUDA_FN(void distributed_lines_prepare(CUstream_st* stream, const DistributedLineFactors& f,
                                               double* x, double* rhs, bool add_first,
                                               bool add_last, double hg));

// DistributedTridiag's back substitution from the reduced solution, with the explicit half of
// the solver fused in: v = (I + h D) x along the lines, where x is the solution (not stored).
// ends holds 4 × lines values: the rank's first points, its last points, the points before the
// first and after the last; has_before / has_after say whether the last two rows are there
// (otherwise the boundary value g stands for them).
TESSERA_CUDA_FN(void distributed_lines_finish(CUstream_st* stream, const DistributedLineFactors& f,
                                              const double* x, const double* ends, bool has_before,
                                              bool has_after, double h, double g, double* v));

// Bytes per point of the two kernels (prepare: the forward sweep's read and write, the backward
// sweep's read and write; finish: a read and the write of v).
inline double distributed_lines_bytes() {
  return 8.0 * 6;
}

} // namespace tessera::cuda
