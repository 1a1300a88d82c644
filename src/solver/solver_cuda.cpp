// The CUDA backend of the heat2d solver (see solver.hpp): the state, the work block and the
// layout-X lines stay on the rank's GPU; each half-step is a cuda/heat2d kernel and a
// cuda::DeviceTridiag solve on one stream, and the transposes are TransposePlans on device
// memory. Every operation is the CPU's, in the same order, so the fields are the same bits.
// Without a CUDA build the kernels are stubs and resolve_backend never selects this path.
#include <algorithm>

#include "cuda/device.hpp"
#include "cuda/heat2d.hpp"
#include "solver/solver_device.hpp"

namespace tessera::heat2d {

Solver::~Solver() = default;

namespace {

constexpr std::size_t kDouble = sizeof(double);

// As AdiLine::solve: boundary terms, the implicit solve in place, then the explicit half into
// `explicit_out`.
void solve_lines(CUstream_st* s, const AdiLine& line, const cuda::DeviceTridiag& tri,
                 const Config& c, double* lines, std::int64_t rows, double* explicit_out) {
  const double g = c.boundary == Boundary::Dirichlet ? c.boundary_value : 0.0;
  const bool periodic = c.boundary == Boundary::Periodic;
  if (c.boundary == Boundary::Dirichlet && g != 0.0)
    cuda::heat2d_add_boundary(s, lines, rows, line.n(), line.h() * g);
  tri.solve(s, lines, cpu::BatchLayout::rows(line.n(), rows));
  cuda::heat2d_explicit(s, lines, explicit_out, rows, line.n(), line.h(), periodic, g);
}

void apply_explicit(CUstream_st* s, const AdiLine& line, const Config& c, const double* src,
                    double* dst, std::int64_t rows) {
  const double g = c.boundary == Boundary::Dirichlet ? c.boundary_value : 0.0;
  cuda::heat2d_explicit(s, src, dst, rows, line.n(), line.h(), c.boundary == Boundary::Periodic, g);
}

} // namespace

void Solver::device_init() {
  cuda::ensure_device_bound();
  auto d = std::make_unique<Device>();
  d->stream = cuda::make_stream();
  d->u = cuda::DeviceBuffer(local_y_ * kDouble);
  d->work = cuda::DeviceBuffer(std::max(local_x_, local_y_) * kDouble);
  d->lines = cuda::DeviceBuffer(local_x_ * kDouble);
  d->tri_x = cuda::DeviceTridiag(line_x_.implicit_matrix());
  d->tri_y = cuda::DeviceTridiag(line_y_.implicit_matrix());
  CUstream_st* s = d->stream.get();
  cuda::memset_async(s, d->work.data(), 0, d->work.bytes());
  cuda::memset_async(s, d->lines.data(), 0, d->lines.bytes());
  cuda::synchronize(s);
  // The exchange trial (see the constructor), on zeros: the state stays 0 as on the CPU.
  to_x_.execute(d->work.as<double>(), d->lines.as<double>());
  to_y_.execute(d->lines.as<double>(), d->u.as<double>());
  dev_ = std::move(d);
  host_stale_ = false;
  host_newer_ = false;
}

void Solver::device_upload() {
  cuda::copy(dev_->u.data(), u_.data(), local_y_ * kDouble);
  host_newer_ = false;
  host_stale_ = false;
  explicit_ready_ = false;
}

void Solver::device_download() const {
  cuda::copy(u_.data(), dev_->u.data(), local_y_ * kDouble);
  host_stale_ = false;
}

void Solver::device_set_field_x(const double* block_x) {
  Device& d = *dev_;
  cuda::copy(d.lines.data(), block_x, local_x_ * kDouble);
  transpose(to_y_, d.lines.as<double>(), d.u.as<double>(), "layout changes");
  host_stale_ = true;
  host_newer_ = false;
  explicit_ready_ = false;
}

void Solver::device_get_field_x(double* block_x) {
  if (host_newer_)
    device_upload();
  Device& d = *dev_;
  transpose(to_x_, d.u.as<double>(), d.lines.as<double>(), "layout changes");
  cuda::copy(block_x, d.lines.data(), local_x_ * kDouble);
}

void Solver::device_step() {
  if (host_newer_)
    device_upload();
  Device& d = *dev_;
  CUstream_st* s = d.stream.get();
  double* u = d.u.as<double>();
  double* work = d.work.as<double>();
  double* lines = d.lines.as<double>();
  const std::int64_t rows_x = dist_x_.rows(rank_), rows_y = dist_y_.rows(rank_);
  const double bytes_x = 8.0 * static_cast<double>(local_x_);
  const double bytes_y = 8.0 * static_cast<double>(local_y_);
  // Each phase ends with its stream synchronised: the plans run on their own streams, and the
  // phase times are then the GPU's.
  if (!explicit_ready_) {
    ScopedPhase p(*timers_, kYLinesPhase, 2 * bytes_y);
    apply_explicit(s, line_y_, config_, u, work, rows_y);
    cuda::synchronize(s);
  }
  transpose(to_x_, work, lines, kTransposePhase);
  {
    ScopedPhase p(*timers_, kXLinesPhase, 3 * bytes_x);
    solve_lines(s, line_x_, d.tri_x, config_, lines, rows_x, work);
    cuda::synchronize(s);
  }
  transpose(to_y_, work, u, kTransposePhase);
  {
    ScopedPhase p(*timers_, kYLinesPhase, 3 * bytes_y);
    solve_lines(s, line_y_, d.tri_y, config_, u, rows_y, work);
    cuda::synchronize(s);
  }
  explicit_ready_ = true;
  host_stale_ = true;
  ++steps_;
}

} // namespace tessera::heat2d
