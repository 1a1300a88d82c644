// The heat2d output file, written behind the computation through the staging queue and the
// I/O thread (see output.hpp).
#include "solver/output.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/h5_array.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_dimension_scales.hpp"
#include "io/h5_slab_views.hpp"
#include "io/xdmf_sidecar.hpp"
#include "mpi/agreement.hpp"
#include "solver/checkpoint.hpp"

namespace tessera::heat2d {

namespace {

constexpr const char* kOutputKind = "heat2d output";
// NAME.xmf: the XDMF description ParaView and VisIt open (io/xdmf_sidecar.hpp).
constexpr const char* kXdmfSuffix = ".xmf";
// The snapshots as 2-D datasets /xdmf/u/0, /xdmf/u/1, … (views of /fields/u, no copies).
constexpr const char* kXdmfViews = "/xdmf/u";
// Chunks of /fields/u: whole rows of one snapshot, about 4 MiB.
constexpr hsize_t kChunkBytes = hsize_t{4} << 20;

std::vector<double> coordinates(double length, std::int64_t n, Boundary b) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = coordinate(i, length, n, b);
  return v;
}

struct CarriedOver {
  std::vector<double> times;
  std::vector<std::int64_t> steps;
};

} // namespace

Output::Output(io::IoThread& io, const Solver& solver, const Initial& init, OutputSettings settings,
               PhaseTimers* timers)
    : io_(io), comm_(solver.comm()), rank_(solver.rank()), dist_x_(solver.layout_x()),
      config_(solver.config()), with_error_(init.kind == InitialKind::Sine),
      settings_(std::move(settings)), timers_(timers ? timers : &own_timers_),
      queue_(std::max<std::size_t>(settings_.queue_capacity, 1)) {
  auto created = io_.submit([this, init] {
    io::H5File f = io::H5File::create(settings_.path, io_.comm());
    f.expect_sidecar(kXdmfSuffix); // written at the end: its name must not fail only then
    io::write_provenance(f, settings_.provenance);
    io::write_attribute(f, "/", "kind", kOutputKind);
    io::write_attribute(f, "/", "run_id", settings_.run_id);
    io::write_attribute(f, "/", "restarted_from", settings_.restarted_from);
    write_problem_attributes(f, config_, init);
    io::nd::write_vector(f, "/grid/x", coordinates(config_.lx, config_.nx, config_.boundary));
    io::nd::write_vector(f, "/grid/y", coordinates(config_.ly, config_.ny, config_.boundary));
    const auto ny = static_cast<hsize_t>(config_.ny), nx = static_cast<hsize_t>(config_.nx);
    const hsize_t chunk_rows = std::clamp<hsize_t>(kChunkBytes / (8 * nx), 1, ny);
    io::nd::create(f, "/fields/u", io::nd::Elem::f64, {0, ny, nx},
                   {.max_dims = {H5S_UNLIMITED, ny, nx}, .chunk = {1, chunk_rows, nx}});
    // netCDF-4 and xarray look for a variable's dimensions in its own group and above: the
    // coordinates get second names beside /fields/u.
    io::link_object(f, "/grid/x", "/fields/x");
    io::link_object(f, "/grid/y", "/fields/y");
    io::attach_dimension_scale(f, "/fields/u", 2, "/fields/x", "x");
    io::attach_dimension_scale(f, "/fields/u", 1, "/fields/y", "y");
    file_.emplace(std::move(f));
  });
  mpi::collectively(comm_, [&] { created.get(); });
}

Output::~Output() {
  // Every queued write runs to its end on every rank, even while unwinding: the writes are
  // collective, and a rank that dropped one (aborting the queue) while another rank's I/O thread
  // had already started it would leave that thread in a collective call nobody joins. Closing
  // (not aborting) keeps the items, and a write can never wait for an item: each one was queued
  // before its write was submitted.
  queue_.close();
  for (auto& f : pending_)
    f.wait();
  if (!file_)
    return;
  if (std::uncaught_exceptions() > 0) {
    // Unwinding, maybe on this rank only: no collective close (the file removes its temporary).
    file_.reset();
    return;
  }
  try {
    io_.submit([this] { file_.reset(); }).wait();
  } catch (...) {
    file_.reset(); // the I/O thread is gone: nobody else touches HDF5 now
  }
}

void Output::check_pending(std::exception_ptr local) {
  using namespace std::chrono_literals;
  while (!pending_.empty() && pending_.front().wait_for(0s) == std::future_status::ready) {
    try {
      pending_.front().get();
    } catch (...) {
      if (!local)
        local = std::current_exception();
    }
    pending_.pop_front();
  }
  // Ranks see a failed write at different times; agreeing here makes them stop together.
  mpi::agree(comm_, local);
}

void Output::write_snapshot() {
  std::optional<Snapshot> s = queue_.pop();
  if (!s)
    TESSERA_THROW(InternalError, "snapshot writer found the staging queue closed");
  try {
    const auto ny = static_cast<hsize_t>(config_.ny), nx = static_cast<hsize_t>(config_.nx);
    const auto k = static_cast<hsize_t>(s->index);
    io::nd::extend(*file_, "/fields/u", {k + 1, ny, nx});
    const io::nd::Box mine{{k, static_cast<hsize_t>(dist_x_.begin(rank_)), 0},
                           {1, static_cast<hsize_t>(dist_x_.rows(rank_)), nx}};
    io::nd::write(*file_, "/fields/u", io::nd::Elem::f64, mine, s->field_x.data());
  } catch (...) {
    queue_.abort(std::current_exception());
    throw;
  }
}

void Output::snapshot(Solver& solver) {
  Snapshot s;
  s.index = snapshots();
  s.field_x.resize(static_cast<std::size_t>(dist_x_.local_size(rank_)));
  {
    ScopedPhase p(*timers_, "snapshots: copy", 16.0 * static_cast<double>(s.field_x.size()));
    solver.get_field_x(s.field_x.data());
  }
  times_.push_back(solver.time());
  steps_.push_back(solver.steps_done());
  std::exception_ptr error;
  try {
    ScopedPhase p(*timers_, "snapshots: waiting on I/O");
    queue_.push(std::move(s));
    pending_.push_back(io_.submit([this] { write_snapshot(); }));
  } catch (...) {
    error = std::current_exception();
  }
  check_pending(error);
}

std::int64_t Output::carry_over(const std::string& previous, std::int64_t last_step) {
  auto request = io_.submit([this, previous, last_step] {
    CarriedOver c;
    try {
      const io::H5File old = io::H5File::open_read(previous, io_.comm());
      const auto kind = io::read_string_attribute(old, "/", "kind");
      const auto id = io::read_string_attribute(old, "/", "run_id");
      if (!kind || *kind != kOutputKind || !id || *id != settings_.run_id)
        TESSERA_THROW(InputError, "'{}' is not the output of the run that wrote the checkpoint",
                      previous);
      // An output that reached the checkpoint's step holds every snapshot up to it (a restart is
      // bit for bit, so those after it are computed again, the same).
      const auto done = io::read_int_attribute(old, "/", "steps_done");
      if (!done || *done < last_step)
        TESSERA_THROW(InputError, "'{}' ends at step {}, before the checkpoint's step {}", previous,
                      done ? *done : -1, last_step);
      const auto steps = io::nd::read_i64_vector(old, "/fields/step");
      const auto times = io::nd::read_f64_vector(old, "/fields/time");
      const auto ny = static_cast<hsize_t>(config_.ny), nx = static_cast<hsize_t>(config_.nx);
      const io::nd::Dims d = io::nd::dims(old, "/fields/u");
      if (d.size() != 3 || d[1] != ny || d[2] != nx || d[0] < steps.size() ||
          times.size() != steps.size())
        TESSERA_THROW(InputError, "'{}' has snapshots of another shape", previous);
      std::vector<double> buf(static_cast<std::size_t>(dist_x_.local_size(rank_)));
      for (std::size_t k = 0; k < steps.size() && steps[k] <= last_step; ++k) {
        const io::nd::Box mine{{k, static_cast<hsize_t>(dist_x_.begin(rank_)), 0},
                               {1, static_cast<hsize_t>(dist_x_.rows(rank_)), nx}};
        io::nd::read(old, "/fields/u", io::nd::Elem::f64, mine, buf.data());
        io::nd::extend(*file_, "/fields/u", {k + 1, ny, nx});
        io::nd::write(*file_, "/fields/u", io::nd::Elem::f64, mine, buf.data());
        c.steps.push_back(steps[k]);
        c.times.push_back(times[k]);
      }
    } catch (const Error& e) {
      // Every rank gets here together: the reads above agree on failure.
      if (rank_ == 0 && std::filesystem::exists(previous))
        log::warn("the output starts at the restart step; earlier snapshots were not carried "
                  "over: {}",
                  e.what());
      else if (rank_ == 0)
        log::info("no earlier output '{}': the output starts at the restart step", previous);
      c = {};
    }
    return c;
  });
  CarriedOver c;
  mpi::collectively(comm_, [&] { c = request.get(); });
  times_ = std::move(c.times);
  steps_ = std::move(c.steps);
  return snapshots();
}

void Output::finish(const DiagnosticsSeries& diagnostics, bool finished, std::int64_t steps_done) {
  queue_.close();
  auto done = io_.submit([&] {
    if (const auto e = queue_.error())
      std::rethrow_exception(e); // a snapshot failed: never commit a file with a hole
    io::nd::write_vector(*file_, "/fields/time", times_);
    io::nd::write_vector(*file_, "/fields/step", steps_);
    io::attach_dimension_scale(*file_, "/fields/u", 0, "/fields/time", "time");
    write_diagnostics(*file_, diagnostics, with_error_);
    io::write_attribute(*file_, "/", "steps_done", static_cast<long long>(steps_done));
    io::write_attribute(*file_, "/", "finished", static_cast<long long>(finished ? 1 : 0));
    // XDMF readers want each snapshot as a 2-D dataset of its own (io/h5_slab_views.hpp).
    io::create_slab_views(*file_, "/fields/u", kXdmfViews, snapshots());
    file_->add_sidecar(kXdmfSuffix, [this](const std::string& data_file) {
      return io::xdmf_rectilinear_series({.data_file = data_file,
                                          .x = "/grid/x",
                                          .y = "/grid/y",
                                          .field_views = kXdmfViews,
                                          .field_name = "u",
                                          .nx = config_.nx,
                                          .ny = config_.ny,
                                          .times = times_});
    });
    file_->commit();
    file_.reset();
  });
  std::exception_ptr error;
  for (auto& f : pending_) {
    try {
      f.get();
    } catch (...) {
      if (!error)
        error = std::current_exception();
    }
  }
  pending_.clear();
  try {
    done.get();
  } catch (...) {
    if (!error)
      error = std::current_exception();
  }
  mpi::agree(comm_, error);
}

double Output::wait_seconds() const {
  return queue_.stats().push_wait_seconds;
}

} // namespace tessera::heat2d
