// The device state of the heat2d solver's CUDA backend (Solver::Device; solver_cuda.cpp uses
// it): the state, the work block and the layout-X lines on the rank's GPU, the factorised line
// matrices and the stream the line work runs on. Plain C++: no CUDA headers.
#pragma once

#include "cuda/buffer.hpp"
#include "cuda/stream.hpp"
#include "cuda/tridiag.hpp"
#include "solver/solver.hpp"

namespace tessera::heat2d {

struct Solver::Device {
  cuda::unique_stream stream;
  cuda::DeviceBuffer u;     // the state, layout Y
  cuda::DeviceBuffer work;  // the explicit half, input of the next transpose
  cuda::DeviceBuffer lines; // layout X lines being solved
  cuda::DeviceTridiag tri_x, tri_y;
};

} // namespace tessera::heat2d
