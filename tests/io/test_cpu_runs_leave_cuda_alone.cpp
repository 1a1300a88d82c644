// CUDA starts only when a GPU path runs: the commands with --backend cpu (and generate, check)
// make no call that reaches the CUDA runtime or NVML, counted by cuda::runtime_queries() (the
// stubs of a build without CUDA count the calls a CUDA build would make). Nor do file jobs on
// `auto`, which keep host data on the CPU; `auto` where data could live on a GPU asks.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <mpi.h>

#include <fstream>
#include <string>
#include <vector>

#include "../mpi_test_support.hpp"
#include "cli/commands.hpp"
#include "cuda/device.hpp"
#include "mpi/collectives.hpp"

namespace tessera {
namespace {

using test::rank_of;
using test::size_of;

// Runs `tessera ARGS` in this process, on every rank.
int tessera(const std::string& args) {
  app::Context ctx;
  ctx.comm = MPI_COMM_WORLD;
  ctx.rank = rank_of();
  ctx.nranks = size_of();
  ctx.thread_level = MPI_THREAD_MULTIPLE;
  ctx.command_line = "tessera " + args;
  CLI::App cli{"tessera"};
  cli.require_subcommand(1);
  const std::vector<app::Command> commands = {
      app::add_run(cli, ctx), app::add_check(cli, ctx), app::add_generate(cli, ctx),
      app::add_transpose(cli, ctx), app::add_reduce(cli, ctx)};
  cli.parse(args, false);
  for (const auto& c : commands)
    if (c.sub->parsed())
      return c.run();
  return 2;
}

class CpuRuns : public testing::Test {
protected:
  void SetUp() override {
    a_ = dir_.file("a.h5");
    ASSERT_EQ(tessera("generate " + a_ + ":/A --rows 9 --cols 7"), 0);
    if (rank_of() == 0) {
      std::ofstream deck(dir_.file("pipeline.toml"));
      deck << "[job]\nkind = \"pipeline\"\n[matrix]\nrows = 6\ncols = 5\n[output]\nfile = \""
           << dir_.file("pipe.h5") << "\"\n";
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  test::TempDir dir_{"cpu-runs"};
  std::string a_;
};

TEST_F(CpuRuns, BackendCpuNeverAsksTheCudaRuntime) {
  const long long before = cuda::runtime_queries();
  EXPECT_EQ(tessera("generate " + dir_.file("g.h5") + ":/G --rows 4 --cols 3 --dtype c64"), 0);
  EXPECT_EQ(tessera("transpose " + a_ + ":/A " + dir_.file("t.h5") + ":/T --backend cpu"), 0);
  EXPECT_EQ(
      tessera("transpose " + a_ + ":/A " + dir_.file("o.h5") + ":/T --backend cpu --out-of-core"),
      0);
  EXPECT_EQ(tessera("reduce " + a_ + ":/A --op sum,max --backend cpu --memory-limit 1GiB"), 0);
  EXPECT_EQ(tessera("reduce " + a_ + ":/A --op norm2 --axis rows --backend cpu --out-of-core"), 0);
  EXPECT_EQ(tessera("run --backend cpu --set grid.nx=8 --set grid.ny=8 --set time.steps=2 --set "
                    "output.file=" +
                    dir_.file("heat.h5")),
            0);
  EXPECT_EQ(tessera("run " + dir_.file("pipeline.toml") + " --backend cpu"), 0);
  EXPECT_EQ(tessera("check " + dir_.file("pipeline.toml")), 0);
  EXPECT_EQ(cuda::runtime_queries(), before) << "a CPU-only command asked the CUDA runtime";
}

TEST_F(CpuRuns, FileJobsOnAutoLeaveCudaAlone) {
  // Data from a file, back to a file: auto takes the CPU without asking about GPUs.
  const long long before = cuda::runtime_queries();
  EXPECT_EQ(tessera("reduce " + a_ + ":/A --op sum --backend auto"), 0);
  EXPECT_EQ(tessera("transpose " + a_ + ":/A " + dir_.file("u.h5") + ":/T"), 0);
  EXPECT_EQ(cuda::runtime_queries(), before) << "a file job on auto asked the CUDA runtime";
}

TEST_F(CpuRuns, AutoAsksWhetherThereIsAGpuWhereTheDataCouldLiveThere) {
  // heat2d's fields can live on a GPU: auto must find out whether the ranks have one.
  const long long before = cuda::runtime_queries();
  EXPECT_EQ(tessera("run --set grid.nx=8 --set grid.ny=8 --set time.steps=2 --set output.file=" +
                    dir_.file("auto.h5")),
            0);
  // Without CUDA compiled in, only the rank that explains the fallback asks (for the reason).
  EXPECT_TRUE(mpi::any_rank(MPI_COMM_WORLD, cuda::runtime_queries() > before));
}

} // namespace
} // namespace tessera
