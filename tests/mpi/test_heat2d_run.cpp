// Whole heat2d runs: validation of the settings, the output file layout, an initial condition
// read from a dataset, and a field that is not finite, at the start or during the run.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/h5_array.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "solver/run.hpp"
#include "solver/solver.hpp"
#include "test_heat2d_run_support.hpp"

namespace {

using namespace tessera::heat2d;
using namespace heat2d_test;
namespace h5 = tessera::io::nd;
namespace io = tessera::io;

TEST(Heat2dOutput, HasTheDocumentedLayout) {
  heat2d_test::TempDir dir;
  RunSettings s = base_settings(dir.file("out.h5"), Boundary::Dirichlet, "sine");
  const RunResult r = run(s, MPI_COMM_WORLD);
  EXPECT_FALSE(r.interrupted);
  const OutputContents c = read_output(s.output_file, true);
  // Snapshots at 0, 4, …, 20 and the last step 23.
  const std::vector<std::int64_t> snap_steps = {0, 4, 8, 12, 16, 20, 23};
  EXPECT_EQ(c.step, snap_steps);
  ASSERT_EQ(c.u_dims, (h5::Dims{snap_steps.size(), 14, 19}));
  for (std::size_t k = 0; k < snap_steps.size(); ++k)
    EXPECT_EQ(c.time[k], static_cast<double>(snap_steps[k]) * s.config.dt);
  const std::vector<std::int64_t> diag_steps = {0, 3, 6, 9, 12, 15, 18, 21, 23};
  EXPECT_EQ(c.diag_step, diag_steps);
  EXPECT_EQ(c.x.size(), 19u);
  EXPECT_DOUBLE_EQ(c.x[0], 1.0 / 20);
  EXPECT_DOUBLE_EQ(c.y[13], 14 * 0.7 / 15);
  EXPECT_EQ(c.finished, 1);
  EXPECT_EQ(c.steps_done, 23);
  // The last snapshot is the final field.
  std::vector<double> last(c.u.end() - 14 * 19, c.u.end());
  s.output_file.clear();
  s.keep_final_field = true;
  const RunResult again = run(s, MPI_COMM_WORLD);
  const tessera::BlockDistribution lx({14, 19}, size_of());
  for (std::int64_t k = 0; k < lx.local_size(rank_of()); ++k)
    ASSERT_EQ(again.final_field_x[static_cast<std::size_t>(k)],
              last[static_cast<std::size_t>(lx.begin(rank_of()) * 19 + k)]);
  // Besides the output only its XDMF sidecar: no temporary, no lock.
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.file("out.h5.xmf")));
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name == "out.h5.xmf" || !name.starts_with("out.h5.")) << e.path();
  }
}

TEST(Heat2dOutput, InitialConditionFromADataset) {
  heat2d_test::TempDir dir;
  const unsigned seed = heat2d_test::shared_seed();
  const std::int64_t nx = 19, ny = 14;
  const auto u0 = heat2d_test::random_field(nx, ny, seed);
  {
    const tessera::BlockDistribution d({ny, nx}, size_of());
    io::H5File f = io::H5File::create(dir.file("init.h5"), MPI_COMM_WORLD);
    io::write_rows(f, "/data/u0", d, rank_of(), tessera::DType::f64,
                   u0.data() + d.begin(rank_of()) * nx);
    f.commit();
  }
  RunSettings s = base_settings(dir.file("out.h5"), Boundary::Periodic,
                                (dir.file("init.h5") + ":/data/u0").c_str());
  s.steps = 0;
  run(s, MPI_COMM_WORLD);
  const OutputContents c = read_output(s.output_file, false);
  ASSERT_EQ(c.u.size(), u0.size()) << "seed " << seed;
  EXPECT_EQ(c.u, u0) << "seed " << seed;

  // A dataset of the wrong shape is refused on every rank, naming it.
  s.config.nx = 20;
  try {
    run(s, MPI_COMM_WORLD);
    ADD_FAILURE() << "a 14x19 dataset was accepted for a 14x20 grid";
  } catch (const tessera::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/data/u0"), std::string::npos) << e.what();
  }
}

// A NaN in the initial field stops the run at step 0 on every rank, before any file is written.
TEST(Heat2dRun, ANanInTheInitialFieldStopsAtStepZero) {
  heat2d_test::TempDir dir;
  const unsigned seed = heat2d_test::shared_seed();
  const std::int64_t nx = 19, ny = 14;
  auto u0 = heat2d_test::random_field(nx, ny, seed);
  u0[seed % u0.size()] = std::nan("");
  {
    const tessera::BlockDistribution d({ny, nx}, size_of());
    io::H5File f = io::H5File::create(dir.file("nan.h5"), MPI_COMM_WORLD);
    io::write_rows(f, "/u0", d, rank_of(), tessera::DType::f64,
                   u0.data() + d.begin(rank_of()) * nx);
    f.commit();
  }
  RunSettings s =
      base_settings(dir.file("out.h5"), Boundary::Periodic, (dir.file("nan.h5") + ":/u0").c_str());
  try {
    run(s, MPI_COMM_WORLD);
    ADD_FAILURE() << "a NaN in the initial field was not noticed (seed " << seed << ")";
  } catch (const tessera::NumericalError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("the initial field (step 0"), std::string::npos) << m;
    EXPECT_NE(m.find("is not finite (total nan"), std::string::npos) << m;
    EXPECT_TRUE(e.collective()) << m;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.h5")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.h5.partial")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.ckpt.h5")));
}

// A field that stops being finite during the run is noticed at the next diagnostics step or
// checkpoint, whichever comes first; the error names that step, and the last checkpoint (of a
// checked, finite state) is not overwritten.
TEST(Heat2dRun, ANanMidRunStopsNamingTheStepAndKeepsTheLastCheckpoint) {
  const unsigned seed = heat2d_test::shared_seed();
  const int spoil_rank = static_cast<int>(seed % static_cast<unsigned>(size_of()));
  struct Case {
    std::int64_t diagnostics_every, noticed;
  };
  // NaN after step 7; checkpoints every 5 (the one at 5 is kept).
  for (const Case k : {Case{0, 10}, Case{3, 9}}) {
    SCOPED_TRACE(k.diagnostics_every);
    heat2d_test::TempDir dir;
    RunSettings s = base_settings(dir.file("p.h5"), Boundary::Dirichlet, "gaussian");
    s.diagnostics_every = k.diagnostics_every;
    s.checkpoint_every = 5;
    s.after_step = [&](std::int64_t n, Solver& solver) {
      if (n == 7 && rank_of() == spoil_rank) {
        const auto u = solver.mutable_field_y();
        u[seed % u.size()] = std::nan("");
      }
    };
    try {
      run(s, MPI_COMM_WORLD);
      ADD_FAILURE() << "a NaN in the field was not noticed (seed " << seed << ")";
    } catch (const tessera::NumericalError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(fmt::format("the field at step {} (finite at step", k.noticed)),
                std::string::npos)
          << m;
      EXPECT_NE(m.find(fmt::format("the last checkpoint, '{}' (step 5)", dir.file("p.ckpt.h5"))),
                std::string::npos)
          << m;
      EXPECT_TRUE(e.collective()) << m;
    }
    EXPECT_FALSE(std::filesystem::exists(dir.file("p.h5")));
    EXPECT_FALSE(std::filesystem::exists(dir.file("p.h5.partial")));
    const io::H5File ck = io::H5File::open_read(dir.file("p.ckpt.h5"), MPI_COMM_WORLD);
    EXPECT_EQ(io::read_int_attribute(ck, "/", "step").value_or(-1), 5);
    std::vector<double> u(19 * 14);
    h5::read(ck, "/fields/u", h5::Elem::f64, {{0, 0}, {14, 19}}, u.data());
    for (const double v : u)
      ASSERT_TRUE(std::isfinite(v)) << "the kept checkpoint holds " << v;
  }
}

TEST(Heat2dRun, RejectsBadSettingsOnEveryRankNamingTheKey) {
  const int p = size_of();
  RunSettings ok;
  ok.config.nx = ok.config.ny = 8;
  ok.config.dt = 1e-3;
  ok.steps = 1;
  ok.handle_signals = false;
  // `ok` with one setting changed: refused on every rank, naming the key.
  auto rejects = [&](const std::string& key, const std::function<void(RunSettings&)>& change) {
    RunSettings s = ok;
    change(s);
    try {
      run(s, MPI_COMM_WORLD);
      ADD_FAILURE() << "expected an error naming " << key;
    } catch (const tessera::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      EXPECT_TRUE(e.collective()) << e.what();
    }
  };
  rejects("grid.nx", [](RunSettings& s) { s.config.nx = 0; });
  rejects("grid.ny", [](RunSettings& s) { s.config.ny = -3; });
  rejects("time.dt", [](RunSettings& s) { s.config.dt = 0.0; });
  rejects("grid.lx", [](RunSettings& s) { s.config.lx = -1.0; });
  rejects("physics.alpha", [](RunSettings& s) { s.config.alpha = std::nan(""); });
  rejects("physics.alpha", [](RunSettings& s) { s.config.alpha = 0.0; });
  // The spacing's square underflows: the line systems would be singular.
  rejects("grid.lx", [](RunSettings& s) { s.config.lx = 1e-300; });
  // The spacing's square overflows (and the coordinates).
  rejects("grid.ly", [](RunSettings& s) { s.config.ly = 1e308; });
  rejects("time.steps", [](RunSettings& s) { s.steps = -1; });
  rejects("output.snapshot_every", [](RunSettings& s) { s.snapshot_every = -2; });
  if (p > 1) {
    rejects("grid.ny", [p](RunSettings& s) { s.config.ny = p - 1; });
    rejects("grid.nx", [p](RunSettings& s) { s.config.nx = p - 1; });
  }
}

TEST(Heat2dOutput, UnwritableOutputFailsOnEveryRank) {
  RunSettings s = base_settings("/nonexistent-dir/x/out.h5", Boundary::Dirichlet, "sine");
  EXPECT_THROW(run(s, MPI_COMM_WORLD), tessera::IoError);
}

} // namespace
