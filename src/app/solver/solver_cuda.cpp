// The CUDA step engine of the heat2d solver (see solver.hpp): the state and the line blocks stay on
// the rank's GPU and a whole step is queued on one stream, with no host synchronisation inside
// it on one rank (several ranks wait for their stream where a transpose plan exchanges data);
// step() waits once, at its end, so that its host time is the step's time.
//
// Every line is solved in the layout where the lines are columns (cuda/heat2d.hpp), so
// consecutive threads touch consecutive addresses. The state is kept as layout Y transposed
// (Yt: ny × rows_y, y-lines as columns), the x-lines as layout X transposed (Xt: nx × rows_x).
// One step, with Yt → Xt and Xt → Yt the layout changes:
//   [first step only: explicit half in y, u → work]
//   work (Yt) → lines (Xt)                               layout change
//   x-solve of lines, explicit half in x → work (Xt)     one fused kernel, solution not stored
//   work (Xt) → u (Yt)                                   layout change
//   y-solve of u in place, explicit half in y → work     one fused kernel; the next step starts
// On one rank a layout change is one local transpose (Yt of one rank is layout X). On several
// it is the distributed TransposePlan on column-major blocks (Yt and Xt are layouts Y and X
// stored by columns), which sends each piece as it lies and transposes it once on arrival.
// Every value is computed by the CPU's operations in the CPU's order (the
// order within a line does not depend on where the line is stored), so the bits are the CPU's.
// On one rank with more than two tiles a side (cuda/heat2d_tiles.hpp) the step runs instead by
// tiles where the state lies, with no transposes and one pass over the field fewer per half step;
// its partitioned solves agree with the CPU to rounding, not bit for bit.
// With several ranks and LineSolve::Distributed the x half step runs without the plans instead
// (distributed_x_half): the x-lines are solved where they lie, through a reduced system.
// Without a CUDA build the kernels are stubs and resolve_backend never selects this path.
#include <algorithm>
#include <span>
#include <vector>

#include "cuda/device.hpp"
#include "cuda/heat2d.hpp"
#include "cuda/transpose.hpp"
#include "mpi/communicator.hpp"
#include "solver/solver_device.hpp"

namespace tessera::heat2d {

namespace {

constexpr std::size_t kDouble = sizeof(double);

double boundary_term(const Config& c) {
  return c.boundary == Boundary::Dirichlet ? c.boundary_value : 0.0;
}

// Queues the phase's start event on construction and its stop event on destruction; the times
// are read back later (CudaStep::collect_times), so timing never blocks the stream.
class DevicePhase {
public:
  DevicePhase(std::deque<DeviceTimed>& pending, CUstream_st* s, const char* phase, double bytes)
      : t_(pending.emplace_back(phase, bytes)), s_(s) {
    t_.start.record(s_);
  }
  ~DevicePhase() { t_.stop.record(s_); }
  DevicePhase(const DevicePhase&) = delete;
  DevicePhase& operator=(const DevicePhase&) = delete;

private:
  DeviceTimed& t_;
  CUstream_st* s_;
};

// Steps whose phase times may wait unread before a step blocks on the oldest.
constexpr std::size_t kMaxPendingPhases = 64;

class CudaStep final : public StepEngine {
public:
  explicit CudaStep(SolverState& s);

  std::span<const double> field_y() override {
    if (host_stale_)
      download();
    return {s_.u.data(), s_.local_y};
  }
  std::span<double> mutable_field_y() override {
    explicit_ready_ = false;
    if (host_stale_)
      download();
    host_newer_ = true;
    return {s_.u.data(), s_.local_y};
  }
  const double* device_field_y() override;
  void set_field_x(const double* block_x) override;
  void get_field_x(double* block_x) override;
  void step() override;
  double bytes_per_step() const noexcept override;

private:
  void distributed_x_half();
  void tiled_step();
  void finish_step(CUstream_st* s);
  void upload();                           // s_.u → device state (after mutable_field_y)
  void download();                         // device state → s_.u
  void to_x(const double* yt, double* xt); // layout changes of the line blocks
  void to_y(const double* xt, double* yt);
  void relayout(TransposePlan& plan, const double* in, double* out, std::int64_t n_from,
                std::int64_t n_to, std::int64_t from_cells);
  // Adds the phase times the device has finished to the timers (all of them when `wait`).
  void collect_times(bool wait);

  SolverState& s_;
  std::unique_ptr<CudaDevice> dev_;
  bool explicit_ready_ = false; // work holds the explicit half of the state
  bool host_stale_ = false;     // s_.u is older than the device state
  bool host_newer_ = false;     // s_.u was written through mutable_field_y()
};

void CudaStep::collect_times(bool wait) {
  auto& pending = dev_->pending;
  while (!pending.empty()) {
    auto& t = pending.front();
    if (!wait && pending.size() <= kMaxPendingPhases && !t.stop.done())
      break;
    t.stop.synchronize();
    s_.timers->add(t.phase, 1e-3 * cuda::Event::elapsed_ms(t.start, t.stop), t.bytes);
    pending.pop_front();
  }
}

CudaStep::CudaStep(SolverState& state) : s_(state) {
  cuda::ensure_device_bound();
  auto d = std::make_unique<CudaDevice>();
  d->stream = cuda::make_stream();
  const std::size_t most = std::max(s_.local_x, s_.local_y) * kDouble;
  d->u = cuda::DeviceBuffer(s_.local_y * kDouble);
  d->work = cuda::DeviceBuffer(most);
  d->lines = cuda::DeviceBuffer(s_.local_x * kDouble);
  d->tri_x = cuda::DeviceTridiag(s_.line_x.implicit_matrix());
  d->tri_y = cuda::DeviceTridiag(s_.line_y.implicit_matrix());
  CUstream_st* s = d->stream.get();
  cuda::memset_async(s, d->u.data(), 0, d->u.bytes());
  cuda::memset_async(s, d->work.data(), 0, d->work.bytes());
  cuda::memset_async(s, d->lines.data(), 0, d->lines.bytes());
  d->single_rank = mpi::comm_size(s_.comm) == 1;
  if (d->single_rank && cuda::TiledHeat2d::fits(s_.config.nx, s_.config.ny))
    d->tiled = std::make_unique<cuda::TiledHeat2d>(
        s_.config.nx, s_.config.ny, s_.line_x.h(), s_.line_y.h(),
        s_.config.boundary == Boundary::Periodic, boundary_term(s_.config));
  if (s_.xdist) {
    // The x-lines' interior factors, copied once (heat2d_distributed.hpp).
    const DistributedTridiag::Factors f = s_.xdist->factors();
    const std::size_t L = f.a.size();
    const std::size_t ny = static_cast<std::size_t>(s_.config.ny);
    std::vector<double> t;
    for (const auto part : {f.a, f.c, f.inv, f.cp, f.p, f.q})
      t.insert(t.end(), part.begin(), part.end());
    d->dist_factors = cuda::DeviceBuffer(std::max<std::size_t>(t.size(), 1) * kDouble);
    if (!t.empty())
      cuda::copy(d->dist_factors.data(), t.data(), t.size() * kDouble);
    const double* base = d->dist_factors.as<double>();
    d->dist = {.a = base,
               .c = base + L,
               .inv = base + 2 * L,
               .cp = base + 3 * L,
               .p = base + 4 * L,
               .q = base + 5 * L,
               .points = static_cast<std::int64_t>(L),
               .lines = s_.config.ny};
    d->dist_rhs = cuda::DeviceBuffer(2 * ny * kDouble);
    d->dist_ends = cuda::DeviceBuffer(4 * ny * kDouble);
    d->ends_host.assign(4 * ny, 0.0);
  }
  if (!d->single_rank) {
    d->stage = cuda::DeviceBuffer(most);
    d->stage2 = cuda::DeviceBuffer(most);
    cuda::memset_async(s, d->stage.data(), 0, d->stage.bytes());
    cuda::memset_async(s, d->stage2.data(), 0, d->stage2.bytes());
    cuda::synchronize(s);
    // The exchange trial (see the constructor), on zeros: the state stays 0 as on the CPU.
    s_.to_x.execute(d->stage.as<double>(), d->stage2.as<double>());
    s_.to_y.execute(d->stage2.as<double>(), d->stage.as<double>());
  }
  cuda::synchronize(s);
  dev_ = std::move(d);
  host_stale_ = false;
  host_newer_ = false;
}

// A transposed line block (n_from × rows_from, `from_cells` on this rank) → the other one
// (n_to × rows_to): one local transpose on one rank; with several, the plan on column-major
// blocks.
void CudaStep::relayout(TransposePlan& plan, const double* in, double* out, std::int64_t n_from,
                        std::int64_t n_to, std::int64_t from_cells) {
  CudaDevice& d = *dev_;
  CUstream_st* s = d.stream.get();
  if (d.single_rank) {
    DevicePhase p(d.pending, s, kTransposePhase, 16.0 * static_cast<double>(from_cells));
    cuda::transpose(s, in, out, n_from, n_to);
    return;
  }
  cuda::synchronize(s); // the plan works on streams of its own
  s_.transpose(plan, in, out, kTransposePhase);
}

// Yt (ny × rows_y) → Xt (nx × rows_x).
void CudaStep::to_x(const double* yt, double* xt) {
  relayout(s_.to_x, yt, xt, s_.config.ny, s_.config.nx, s_.local_y);
}

// Xt (nx × rows_x) → Yt (ny × rows_y).
void CudaStep::to_y(const double* xt, double* yt) {
  relayout(s_.to_y, xt, yt, s_.config.nx, s_.config.ny, s_.local_x);
}

void CudaStep::upload() {
  CudaDevice& d = *dev_;
  CUstream_st* s = d.stream.get();
  // s_.u is layout Y (rows_y × ny); the device state is its transpose.
  if (!d.field.data())
    d.field = cuda::DeviceBuffer(s_.local_y * kDouble);
  cuda::copy_async(s, d.field.data(), s_.u.data(), s_.local_y * kDouble);
  cuda::transpose(s, d.field.as<double>(), d.u.as<double>(), s_.dist_y.rows(s_.rank), s_.config.ny);
  cuda::synchronize(s);
  d.field_fresh = true;
  host_newer_ = false;
  host_stale_ = false;
  explicit_ready_ = false;
}

const double* CudaStep::device_field_y() {
  CudaDevice& d = *dev_;
  CUstream_st* s = d.stream.get();
  if (!d.field.data())
    d.field = cuda::DeviceBuffer(s_.local_y * kDouble);
  if (host_newer_) {
    // The host copy was written and not yet uploaded: upload it now (as upload(); the
    // explicit half was invalidated when it was written), so the next step need not.
    cuda::copy_async(s, d.field.data(), s_.u.data(), s_.local_y * kDouble);
    cuda::transpose(s, d.field.as<double>(), d.u.as<double>(), s_.dist_y.rows(s_.rank),
                    s_.config.ny);
    d.field_fresh = true;
    host_newer_ = false;
  } else if (!d.field_fresh) {
    cuda::transpose(s, d.u.as<double>(), d.field.as<double>(), s_.config.ny,
                    s_.dist_y.rows(s_.rank));
    d.field_fresh = true;
  }
  cuda::synchronize(s);
  collect_times(true);
  return d.field.as<double>();
}

void CudaStep::download() {
  const double* field = device_field_y();
  cuda::copy(s_.u.data(), field, s_.local_y * kDouble);
  host_stale_ = false;
}

void CudaStep::set_field_x(const double* block_x) {
  CudaDevice& d = *dev_;
  CUstream_st* s = d.stream.get();
  if (d.single_rank) {
    // Layout X of one rank is ny × nx: the device state's layout.
    cuda::copy_async(s, d.u.data(), block_x, s_.local_x * kDouble);
  } else {
    // Layout X (rows_x × nx) → Xt, then the plan → Yt.
    cuda::copy_async(s, d.stage.data(), block_x, s_.local_x * kDouble);
    cuda::transpose(s, d.stage.as<double>(), d.stage2.as<double>(), s_.dist_x.rows(s_.rank),
                    s_.config.nx);
    cuda::synchronize(s);
    s_.transpose(s_.to_y, d.stage2.as<double>(), d.u.as<double>(), "layout changes");
  }
  cuda::synchronize(s);
  d.field_fresh = false;
  host_stale_ = true;
  host_newer_ = false;
  explicit_ready_ = false;
}

void CudaStep::get_field_x(double* block_x) {
  if (host_newer_)
    upload();
  CudaDevice& d = *dev_;
  CUstream_st* s = d.stream.get();
  if (d.single_rank) {
    cuda::copy_async(s, block_x, d.u.data(), s_.local_x * kDouble);
  } else {
    // Yt → Xt by the plan, then layout X (rows_x × nx).
    cuda::synchronize(s);
    s_.transpose(s_.to_x, d.u.as<double>(), d.stage.as<double>(), "layout changes");
    cuda::transpose(s, d.stage.as<double>(), d.stage2.as<double>(), s_.config.nx,
                    s_.dist_x.rows(s_.rank));
    cuda::copy_async(s, block_x, d.stage2.data(), s_.local_x * kDouble);
  }
  cuda::synchronize(s);
  collect_times(true);
}

void CudaStep::step() {
  if (host_newer_)
    upload();
  CudaDevice& d = *dev_;
  CUstream_st* s = d.stream.get();
  collect_times(false);
  double* u = d.u.as<double>();
  double* work = d.work.as<double>();
  double* lines = d.lines.as<double>();
  const std::int64_t rows_x = s_.dist_x.rows(s_.rank), rows_y = s_.dist_y.rows(s_.rank);
  const bool periodic = s_.config.boundary == Boundary::Periodic;
  const double g = boundary_term(s_.config);
  const double cells_x = static_cast<double>(s_.local_x), cells_y = static_cast<double>(s_.local_y);
  if (d.tiled) {
    tiled_step();
    return;
  }
  if (!explicit_ready_) {
    DevicePhase p(d.pending, s, kYLinesPhase, 16.0 * cells_y);
    cuda::heat2d_explicit_columns(s, u, work, s_.config.ny, rows_y, s_.line_y.h(), periodic, g);
  }
  if (s_.xdist) {
    distributed_x_half();
  } else {
    to_x(work, lines);
    {
      DevicePhase p(d.pending, s, kXLinesPhase,
                    cuda::heat2d_solve_columns_bytes(periodic, false) * cells_x);
      cuda::heat2d_solve_columns(s, d.tri_x, lines, work, rows_x, s_.line_x.h(), periodic, g,
                                 false);
    }
    to_y(work, u);
  }
  {
    DevicePhase p(d.pending, s, kYLinesPhase,
                  cuda::heat2d_solve_columns_bytes(periodic, true) * cells_y);
    cuda::heat2d_solve_columns(s, d.tri_y, u, work, rows_y, s_.line_y.h(), periodic, g, true);
  }
  finish_step(s); // one wait, after all of the step is queued: no gaps between kernels
}

// Several ranks, LineSolve::Distributed: CpuStep::distributed_x_half on the device. work (Yt)
// holds (I + A_y D_y) u; it goes to layout Y (rows_y × ny, the x-lines as columns) in `stage`,
// the lines are swept there, the reduced system is solved on the host (2 values per line and
// rank gathered), and the back substitution writes the explicit half in x, v, to `stage2`, which
// goes back to Yt in u. The same operations as the CPU's, so the same bits.
void CudaStep::distributed_x_half() {
  CudaDevice& d = *dev_;
  CUstream_st* s = d.stream.get();
  const std::int64_t ny = s_.config.ny, rows = s_.dist_y.rows(s_.rank);
  const bool dirichlet = s_.config.boundary == Boundary::Dirichlet;
  const double g = boundary_term(s_.config);
  const double h = s_.line_x.h();
  const double cells = static_cast<double>(s_.local_y);
  const auto uny = static_cast<std::size_t>(ny);
  if (rows > 0) {
    DevicePhase p(d.pending, s, kXLinesPhase, (16.0 + 32.0) * cells);
    cuda::transpose(s, d.work.as<double>(), d.stage.as<double>(), ny, rows);
    const bool add = dirichlet && g != 0.0;
    cuda::distributed_lines_prepare(s, d.dist, d.stage.as<double>(), d.dist_rhs.as<double>(),
                                    add && s_.dist_y.begin(s_.rank) == 0,
                                    add && s_.dist_y.begin(s_.rank) + rows == s_.config.nx, h * g);
    const std::span<double> rhs = s_.xdist->right_hand_sides();
    cuda::copy_async(s, rhs.data(), d.dist_rhs.data(), rhs.size() * kDouble);
  }
  cuda::synchronize(s);
  {
    ScopedPhase p(*s_.timers, kReducedPhase,
                  16.0 * static_cast<double>(ny * mpi::comm_size(s_.comm)));
    s_.xdist->exchange();
  }
  s_.xdist->reduce();
  if (rows == 0)
    return;
  // The rank's first and last points and its neighbours', as the back substitution reads them.
  double* ends = d.ends_host.data();
  const double* rows4[4] = {s_.xdist->first(), s_.xdist->last(), s_.xdist->before(),
                            s_.xdist->after()};
  for (std::size_t k = 0; k < 4; ++k)
    if (rows4[k] != nullptr)
      std::copy(rows4[k], rows4[k] + ny, ends + k * uny);
  cuda::copy_async(s, d.dist_ends.data(), ends, 4 * uny * kDouble);
  DevicePhase p(d.pending, s, kXLinesPhase, (16.0 + 16.0) * cells);
  cuda::distributed_lines_finish(s, d.dist, d.stage.as<double>(), d.dist_ends.as<double>(),
                                 rows4[2] != nullptr, rows4[3] != nullptr, h, g,
                                 d.stage2.as<double>());
  cuda::transpose(s, d.stage2.as<double>(), d.u.as<double>(), rows, ny);
}

// After a device step is queued: one wait for all of it (callers time step() on the host, the
// run loop's time per step, which must then be the device's time), and the state's flags.
void CudaStep::finish_step(CUstream_st* s) {
  cuda::synchronize(s);
  collect_times(false);
  dev_->field_fresh = false;
  explicit_ready_ = true;
  host_stale_ = true;
  ++s_.steps;
}

// One rank: the step by tiles. explicit_ready_ says that the x reduced inputs of the state are
// there (the previous step left them); the new state goes to `work`, which becomes `u`.
void CudaStep::tiled_step() {
  CudaDevice& d = *dev_;
  CUstream_st* s = d.stream.get();
  cuda::TiledHeat2d& t = *d.tiled;
  if (!explicit_ready_) {
    DevicePhase p(d.pending, s, kXLinesPhase, t.bytes_prepare());
    t.prepare(s, d.u.as<double>());
  }
  {
    DevicePhase p(d.pending, s, kXLinesPhase, t.bytes_half());
    t.half(s, d.u.as<double>());
  }
  {
    DevicePhase p(d.pending, s, kYLinesPhase, t.bytes_full());
    t.full(s, d.u.as<double>(), d.work.as<double>());
  }
  std::swap(d.u, d.work);
  finish_step(s);
}

double CudaStep::bytes_per_step() const noexcept {
  if (dev_->tiled)
    return dev_->tiled->bytes_half() + dev_->tiled->bytes_full();
  if (s_.xdist) // two local transposes, the sweeps and the back substitution; the y-lines as below
    return (32.0 + cuda::distributed_lines_bytes() +
            cuda::heat2d_solve_columns_bytes(s_.config.boundary == Boundary::Periodic, true)) *
           static_cast<double>(s_.local_y);
  const bool periodic = s_.config.boundary == Boundary::Periodic;
  const double cells_x = static_cast<double>(s_.local_x), cells_y = static_cast<double>(s_.local_y);
  double bytes = cuda::heat2d_solve_columns_bytes(periodic, false) * cells_x +
                 cuda::heat2d_solve_columns_bytes(periodic, true) * cells_y;
  if (dev_->single_rank)
    return bytes + 16.0 * (cells_x + cells_y);
  return bytes + s_.to_x.bytes_moved() + s_.to_y.bytes_moved();
}

} // namespace

std::unique_ptr<StepEngine> make_cuda_step(SolverState& state) {
  return std::make_unique<CudaStep>(state);
}

} // namespace tessera::heat2d
