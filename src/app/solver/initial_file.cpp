// The initial state from a 2-D dataset or a slab of a 3-D one (see initial_file.hpp).
#include "solver/initial_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/throw.hpp"
#include "io/h5_array.hpp"
#include "io/h5_matrix.hpp"

namespace tessera::heat2d {

namespace {

// "/fields/u" → "/fields/time".
std::string time_beside(const std::string& dataset) {
  const std::size_t slash = dataset.rfind('/');
  return dataset.substr(0, slash + 1) + "time";
}

} // namespace

InitialSource inspect_initial(const io::H5File& f, const Initial& init, const Config& c) {
  const std::string what = fmt::format("initial.kind: '{}'", initial_name(init));
  InitialSource src;
  if (!init.indexed) {
    if (io::nd::exists(f, init.dataset) && io::nd::dims(f, init.dataset).size() == 3)
      TESSERA_THROW(InputError,
                    "{}: {} in '{}' is 3-D (a series of states): pick one with [k], e.g. '{}[-1]' "
                    "for the last",
                    what, init.dataset, init.file, initial_name(init));
    const io::DatasetInfo info = io::inspect_dataset(f, init.dataset);
    TESSERA_REQUIRE(info.dtype == DType::f32 || info.dtype == DType::f64, InputError,
                    "{}: {} in '{}' is complex; the initial state must be real (f32 or f64)", what,
                    init.dataset, init.file);
    TESSERA_REQUIRE(info.shape.rows == c.ny && info.shape.cols == c.nx, InputError,
                    "{}: {} in '{}' is {} x {}; the grid needs [grid.ny, grid.nx] = [{}, {}]", what,
                    init.dataset, init.file, info.shape.rows, info.shape.cols, c.ny, c.nx);
    return src;
  }
  const io::nd::Dims d = io::nd::dims(f, init.dataset); // InputError naming it when missing
  TESSERA_REQUIRE(d.size() == 3, InputError,
                  "{}: {} in '{}' has {} dimensions; [k] picks a slab of a 3-D dataset "
                  "[n, ny, nx] (leave [k] out for a 2-D one)",
                  what, init.dataset, init.file, d.size());
  const auto n = static_cast<std::int64_t>(d[0]);
  TESSERA_REQUIRE(static_cast<std::int64_t>(d[1]) == c.ny &&
                      static_cast<std::int64_t>(d[2]) == c.nx,
                  InputError,
                  "{}: {} in '{}' holds states of {} x {}; the grid needs [grid.ny, grid.nx] = "
                  "[{}, {}]",
                  what, init.dataset, init.file, d[1], d[2], c.ny, c.nx);
  src.slab = init.index < 0 ? n + init.index : init.index;
  TESSERA_REQUIRE(src.slab >= 0 && src.slab < n, InputError,
                  "{}: {} in '{}' has {} states (indices 0 to {}, or -1 to -{} from the end)", what,
                  init.dataset, init.file, n, n - 1, n);
  const std::string time = time_beside(init.dataset);
  if (io::nd::exists(f, time)) {
    const std::vector<double> times = io::nd::read_f64_vector(f, time);
    TESSERA_REQUIRE(static_cast<std::int64_t>(times.size()) == n, InputError,
                    "{}: {} in '{}' has {} values for {} states", what, time, init.file,
                    times.size(), n);
    const double t = times[static_cast<std::size_t>(src.slab)];
    const double steps = std::round(t / c.dt);
    // The solver's clock is step × dt: a time between two steps cannot be continued exactly.
    TESSERA_REQUIRE(std::isfinite(t) && t >= 0 &&
                        std::abs(steps * c.dt - t) <= 1e-9 * std::max(t, c.dt),
                    InputError,
                    "{}: the state is at t = {:.17g}, which is not a whole number of time steps "
                    "time.dt = {}",
                    what, t, c.dt);
    src.start_step = static_cast<std::int64_t>(steps);
  }
  return src;
}

void read_initial_rows(const io::H5File& f, const Initial& init, const InitialSource& src,
                       const BlockDistribution& dist_x, int rank, double* rows) {
  if (src.slab < 0) {
    io::read_rows(f, init.dataset, dist_x, rank, DType::f64, rows);
    return;
  }
  const auto nx = static_cast<hsize_t>(dist_x.global().cols);
  const io::nd::Box mine{
      {static_cast<hsize_t>(src.slab), static_cast<hsize_t>(dist_x.begin(rank)), 0},
      {1, static_cast<hsize_t>(dist_x.rows(rank)), nx}};
  io::nd::read(f, init.dataset, io::nd::Elem::f64, mine, rows);
}

} // namespace tessera::heat2d
