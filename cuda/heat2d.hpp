// The line kernels of the heat2d ADI step on the GPU (src/solver/adi_line.hpp is the CPU side):
// the explicit half v = (I + h D) u along rows, and the Dirichlet boundary terms moved to the
// right-hand side of the implicit half. Each value is computed with the same operations, in the
// same order and without contraction into FMAs, as on the CPU, so both backends give the same
// bits. Device pointers; work is queued on `stream`.
#pragma once

#include <cstdint>

struct CUstream_st;

namespace tessera::cuda {

// dst[r][i] = u_i + h ((u_{i-1} + u_{i+1}) - 2 u_i) for `rows` lines of n values; u_{-1} and u_n
// are `boundary` (Dirichlet) or wrap around (periodic).
void heat2d_explicit(CUstream_st* stream, const double* src, double* dst, std::int64_t rows,
                     std::int64_t n, double h, bool periodic, double boundary);
// lines[r][0] += hg and lines[r][n-1] += hg (in that order when n == 1), for `rows` lines.
void heat2d_add_boundary(CUstream_st* stream, double* lines, std::int64_t rows, std::int64_t n,
                         double hg);

} // namespace tessera::cuda
