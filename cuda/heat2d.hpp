// The line kernels of the heat2d ADI step on the GPU (src/app/solver/adi_line.hpp is the CPU side):
// the explicit half v = (I + h D) u, the Dirichlet boundary terms moved to the right-hand side
// of the implicit half, and the whole line work of one direction fused into one kernel. Each value
// is computed with the same operations, in the same order and without contraction into FMAs, as on
// the CPU, so both backends give the same bits. Device pointers; work is queued on `stream`.
#pragma once

#include <cstdint>

#include "core/backend_fn.hpp"
#include "cuda/tridiag.hpp"

struct CUstream_st;

namespace tessera::cuda {

// dst[r][i] = u_i + h ((u_{i-1} + u_{i+1}) - 2 u_i) for `rows` lines of n values; u_{-1} and u_n
// are `boundary` (Dirichlet) or wrap around (periodic).
TESSERA_CUDA_FN(void heat2d_explicit(CUstream_st* stream, const double* src, double* dst,
                                     std::int64_t rows, std::int64_t n, double h, bool periodic,
                                     double boundary));
// lines[r][0] += hg and lines[r][n-1] += hg (in that order when n == 1), for `rows` lines.
TESSERA_CUDA_FN(void heat2d_add_boundary(CUstream_st* stream, double* lines, std::int64_t rows,
                                         std::int64_t n, double hg));

// Lines stored as the columns of an n × lines block (element i of line s at x[i * lines + s]):
// consecutive threads take consecutive lines, so every access is coalesced. The solver
// transposes so that the lines of the direction at hand are columns.

// dst = (I + h D) src along the columns, boundary as for heat2d_explicit.
TESSERA_CUDA_FN(void heat2d_explicit_columns(CUstream_st* stream, const double* src, double* dst,
                                             std::int64_t n, std::int64_t lines, double h,
                                             bool periodic, double boundary));
// AdiLine::solve along the columns in one pass over the lines: the Dirichlet boundary terms
// (h * boundary at both ends when boundary != 0 and not periodic), x := (I - h D)^{-1} x with
// tri's factorization (n = tri.n()), then explicit_out = (I + h D) x. With keep_solution false
// the solution is not stored: x is left holding intermediate values, one write per value less.
TESSERA_CUDA_FN(void heat2d_solve_columns(CUstream_st* stream, const DeviceTridiag& tri, double* x,
                                          double* explicit_out, std::int64_t lines, double h,
                                          bool periodic, double boundary, bool keep_solution));
// Memory traffic of heat2d_solve_columns in bytes per value (reads + writes of x and
// explicit_out; the factorization is read once per block and not counted).
// Dirichlet: read, forward sweep write, backward sweep read, explicit write (+ the solution);
// periodic adds the backward write and the read of the correction pass.
inline double heat2d_solve_columns_bytes(bool periodic, bool keep_solution) {
  return 8.0 * ((periodic ? 6 : 4) + (keep_solution ? 1 : 0));
}

// err[r][j] = u[r][j] - (offset + (amp * sx[r]) * sy[j]) for rows × ny values: the error against
// the separable exact solution, with the operations of heat2d::Exact::error.
TESSERA_CUDA_FN(void heat2d_sine_error(CUstream_st* stream, const double* u, double* err,
                                       std::int64_t rows, std::int64_t ny, const double* sx,
                                       const double* sy, double amp, double offset));

} // namespace tessera::cuda
