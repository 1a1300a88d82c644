// Writing and reading heat2d checkpoints (see checkpoint.hpp).
#include "solver/checkpoint.hpp"

#include <fmt/format.h>

#include "core/throw.hpp"
#include "io/h5_array.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_matrix.hpp"
#include "mpi/communicator.hpp"

namespace tessera::heat2d {

namespace {

constexpr const char* kCheckpointKind = "heat2d checkpoint";

template <class T>
T required(const std::optional<T>& v, const io::H5File& f, const char* name) {
  if (!v)
    TESSERA_THROW(InputError, "'{}' has no attribute '{}': not a heat2d checkpoint", f.path(),
                  name);
  return *v;
}

double get_double(const io::H5File& f, const char* name) {
  return required(io::read_double_attribute(f, "/", name), f, name);
}
long long get_int(const io::H5File& f, const char* name) {
  return required(io::read_int_attribute(f, "/", name), f, name);
}
std::string get_string(const io::H5File& f, const char* name) {
  return required(io::read_string_attribute(f, "/", name), f, name);
}

} // namespace

void write_problem_attributes(io::H5File& f, const Config& c, const Initial& init) {
  io::write_attribute(f, "/", "nx", static_cast<long long>(c.nx));
  io::write_attribute(f, "/", "ny", static_cast<long long>(c.ny));
  io::write_attribute(f, "/", "lx", c.lx);
  io::write_attribute(f, "/", "ly", c.ly);
  io::write_attribute(f, "/", "alpha", c.alpha);
  io::write_attribute(f, "/", "dt", c.dt);
  io::write_attribute(f, "/", "boundary", std::string(boundary_name(c.boundary)));
  io::write_attribute(f, "/", "boundary_value", c.boundary_value);
  io::write_attribute(f, "/", "initial", initial_name(init));
}

void check_problem_attributes(const io::H5File& f, const Config& c, const Initial& init) {
  auto differs = [&](const char* key, const std::string& theirs, const std::string& ours) {
    if (theirs != ours)
      TESSERA_THROW(InputError,
                    "'{}' was written for {} = {}, but this run has {} = {}: a restart must keep "
                    "the grid, physics, time step, boundary and initial condition",
                    f.path(), key, theirs, key, ours);
  };
  auto num = [](double v) { return fmt::format("{}", v); };
  differs("grid.nx", std::to_string(get_int(f, "nx")), std::to_string(c.nx));
  differs("grid.ny", std::to_string(get_int(f, "ny")), std::to_string(c.ny));
  differs("grid.lx", num(get_double(f, "lx")), num(c.lx));
  differs("grid.ly", num(get_double(f, "ly")), num(c.ly));
  differs("physics.alpha", num(get_double(f, "alpha")), num(c.alpha));
  differs("time.dt", num(get_double(f, "dt")), num(c.dt));
  differs("boundary.kind", get_string(f, "boundary"), std::string(boundary_name(c.boundary)));
  differs("boundary.value", num(get_double(f, "boundary_value")), num(c.boundary_value));
  differs("initial.kind", get_string(f, "initial"), initial_name(init));
}

void write_diagnostics(io::H5File& f, const DiagnosticsSeries& s, bool with_error) {
  io::nd::write_vector(f, "/diagnostics/step", s.step);
  io::nd::write_vector(f, "/diagnostics/time", s.time);
  io::nd::write_vector(f, "/diagnostics/total", s.total);
  io::nd::write_vector(f, "/diagnostics/min", s.min);
  io::nd::write_vector(f, "/diagnostics/max", s.max);
  if (with_error) {
    io::nd::write_vector(f, "/diagnostics/l2_error", s.l2_error);
    io::nd::write_vector(f, "/diagnostics/linf_error", s.linf_error);
  }
}

DiagnosticsSeries read_diagnostics(const io::H5File& f) {
  DiagnosticsSeries s;
  s.step = io::nd::read_i64_vector(f, "/diagnostics/step");
  s.time = io::nd::read_f64_vector(f, "/diagnostics/time");
  s.total = io::nd::read_f64_vector(f, "/diagnostics/total");
  s.min = io::nd::read_f64_vector(f, "/diagnostics/min");
  s.max = io::nd::read_f64_vector(f, "/diagnostics/max");
  if (io::nd::exists(f, "/diagnostics/l2_error")) {
    s.l2_error = io::nd::read_f64_vector(f, "/diagnostics/l2_error");
    s.linf_error = io::nd::read_f64_vector(f, "/diagnostics/linf_error");
  } else {
    s.l2_error.assign(s.step.size(), std::numeric_limits<double>::quiet_NaN());
    s.linf_error = s.l2_error;
  }
  return s;
}

void write_checkpoint(const std::string& path, MPI_Comm comm, const Config& c, const Initial& init,
                      const io::Provenance& provenance, const BlockDistribution& dist_x,
                      const CheckpointState& state, bool with_error) {
  io::H5File f = io::H5File::create(path, comm);
  io::write_provenance(f, provenance);
  io::write_attribute(f, "/", "kind", kCheckpointKind);
  io::write_attribute(f, "/", "step", static_cast<long long>(state.step));
  io::write_attribute(f, "/", "time", state.time);
  io::write_attribute(f, "/", "run_id", state.run_id);
  write_problem_attributes(f, c, init);
  io::write_rows(f, "/fields/u", dist_x, mpi::comm_rank(comm), DType::f64, state.field_x.data());
  write_diagnostics(f, state.diagnostics, with_error);
  f.commit(io::H5File::Durability::Synced);
}

std::int64_t inspect_checkpoint(const io::H5File& f, const Config& c, const Initial& init) {
  const auto kind = io::read_string_attribute(f, "/", "kind");
  if (!kind || *kind != kCheckpointKind)
    TESSERA_THROW(InputError, "'{}' is not a heat2d checkpoint (its root attribute kind is {})",
                  f.path(), kind ? "'" + *kind + "'" : std::string("missing"));
  check_problem_attributes(f, c, init);
  const io::DatasetInfo u = io::inspect_dataset(f, "/fields/u");
  TESSERA_REQUIRE(u.shape.rows == c.ny && u.shape.cols == c.nx, InputError,
                  "'{}': /fields/u is {} x {}, not [grid.ny, grid.nx] = [{}, {}]", f.path(),
                  u.shape.rows, u.shape.cols, c.ny, c.nx);
  return get_int(f, "step");
}

CheckpointState read_checkpoint(const std::string& path, MPI_Comm comm, const Config& c,
                                const Initial& init, const BlockDistribution& dist_x) {
  const io::H5File f = io::H5File::open_read(path, comm);
  CheckpointState s;
  s.step = inspect_checkpoint(f, c, init);
  s.time = get_double(f, "time");
  s.run_id = get_string(f, "run_id");
  s.diagnostics = read_diagnostics(f);
  const int rank = mpi::comm_rank(comm);
  s.field_x.resize(static_cast<std::size_t>(dist_x.local_size(rank)));
  io::read_rows(f, "/fields/u", dist_x, rank, DType::f64, s.field_x.data());
  return s;
}

} // namespace tessera::heat2d
