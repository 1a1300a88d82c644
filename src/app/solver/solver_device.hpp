// The device state of the heat2d solver's CUDA step engine (solver_cuda.cpp): the state and the
// line blocks on the rank's GPU, the factorised line matrices, the stream the step is queued on
// and the timing events of the phases not yet read back. Plain C++: no CUDA headers.
//
// The line blocks are kept with the lines of the direction at hand as columns (the coalesced
// layout of the line kernels): the state is layout Y transposed, ny × rows_y.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "cuda/buffer.hpp"
#include "cuda/heat2d_distributed.hpp"
#include "cuda/heat2d_tiles.hpp"
#include "cuda/stream.hpp"
#include "cuda/tridiag.hpp"
#include "solver/solver.hpp"

namespace tessera::heat2d {

// A phase queued on the device stream, timed by two events and read back once done.
struct DeviceTimed {
  DeviceTimed(const char* p, double b) : phase(p), bytes(b) {}
  cuda::Event start, stop;
  const char* phase;
  double bytes;
};

struct CudaDevice {
  cuda::unique_stream stream;
  cuda::DeviceBuffer u;      // the state: ny × rows_y, y-lines as columns
  cuda::DeviceBuffer work;   // an explicit half (lines as columns), input of the next layout change
  cuda::DeviceBuffer lines;  // nx × rows_x, x-lines as columns: right-hand sides of the x-solves
  cuda::DeviceBuffer stage;  // several ranks: layout X and Xt on their way in and out
  cuda::DeviceBuffer stage2; // (set_field_x, get_field_x, the exchange trial)
  cuda::DeviceBuffer field;  // the state in layout Y, made on demand (device_field_y)
  bool field_fresh = false;  // `field` holds the current state
  cuda::DeviceTridiag tri_x, tri_y;
  bool single_rank = true; // layout changes are local transposes, no plan
  // One rank, more than two tiles a side: the step by tiles, no transposes (heat2d_tiles.hpp);
  // `u` and `work` then alternate as the state.
  std::unique_ptr<cuda::TiledHeat2d> tiled;
  // Several ranks with LineSolve::Distributed (heat2d_distributed.hpp): the interior factors of
  // the x-lines (6 × L), the reduced system's right-hand sides (2 × ny) and the four rows of
  // values it gives back (4 × ny), and their host copy.
  cuda::DeviceBuffer dist_factors, dist_rhs, dist_ends;
  cuda::DistributedLineFactors dist;
  std::vector<double> ends_host;
  std::deque<DeviceTimed> pending; // phases not yet read back, oldest first
};

} // namespace tessera::heat2d
