// Entry point of `tessera`: MPI set-up, command dispatch, and the one place where errors turn
// into a message and an exit code.
#include <CLI/CLI.hpp>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "app/commands.hpp"
#include "app/jobs/run_info.hpp"
#include "core/build_info.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "cpu/transpose_tuner.hpp"
#include "io/h5_file.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"
#include "mpi/environment.hpp"
#include "mpi/oversubscription.hpp"
#include "solver/stop_signal.hpp"

namespace {

std::string joined_command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i)
      s += ' ';
    s += argv[i];
  }
  return s;
}

// Reports an error that escaped a command. Errors all ranks agreed on are printed once by
// rank 0 and the job ends normally with exit code 1; an error only this rank saw may leave the
// others waiting in a collective, so the whole job is aborted.
int report_error(const tessera::app::Context& ctx, const char* kind, const char* what,
                 bool collective) {
  if (collective || ctx.nranks == 1) {
    if (ctx.rank == 0)
      std::fprintf(stderr, "tessera: %s: %s\n", kind, what);
    return 1;
  }
  std::fprintf(stderr, "[rank %d] tessera: %s: %s\n", ctx.rank, kind, what);
  tessera::mpi::abort_reported(ctx.comm, 1);
}

int run_cli(tessera::app::Context& ctx, int argc, char** argv) {
  using namespace tessera::app;
  CLI::App app{"tessera: distributed transpose, reductions and heat solver for large matrices",
               "tessera"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tessera ") + TESSERA_VERSION + " (" +
                                        tessera::build_git_hash() + ")");
  bool quiet = false, verbose = false;
  app.add_flag("-q,--quiet", quiet,
               "Errors only: no progress, warnings, log lines or timing table");
  app.add_flag("-v,--verbose", verbose, "Debug output");
  std::string wisdom, tuning;
  app.add_option("--wisdom", wisdom,
                 "File of kernel choices measured earlier on this kind of processor: reused, and "
                 "extended with new ones (default: $TESSERA_WISDOM)");
  app.add_option("--tuning", tuning,
                 "measure: time candidate kernels on first use of a large shape; estimate: "
                 "never time (default: $TESSERA_TUNING, else measure)")
      ->check(CLI::IsMember({"measure", "estimate"}));
  std::string timing = "table";
  app.add_option("--timing", timing, "What commands print at their end: off, table or json")
      ->check(CLI::IsMember({"off", "table", "json"}))
      ->capture_default_str();

  std::vector<Command> commands = {
      add_info(app, ctx),     add_run(app, ctx),       add_check(app, ctx),
      add_generate(app, ctx), add_transpose(app, ctx), add_reduce(app, ctx),
      add_bench(app, ctx),    add_selftest(app, ctx),  add_deck(app, ctx)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Every rank parses the same argv, so every rank reaches this together.
    if (ctx.rank == 0)
      return app.exit(e);
    return e.get_exit_code();
  }
  ctx.timing = timing == "off"    ? tessera::app::Timing::Off
               : timing == "json" ? tessera::app::Timing::Json
                                  : tessera::app::Timing::Table;
  tessera::init_logging(ctx.rank, ctx.nranks,
                        quiet     ? tessera::Verbosity::Quiet
                        : verbose ? tessera::Verbosity::Verbose
                                  : tessera::Verbosity::Normal);
  if (!wisdom.empty())
    tessera::cpu::set_wisdom_file(wisdom);
  if (!tuning.empty())
    tessera::cpu::set_tuning(tuning == "estimate" ? tessera::cpu::Tuning::Estimate
                                                  : tessera::cpu::Tuning::Measure);
  // Collective; before any work, so that a slow run's cause shows first.
  tessera::mpi::warn_if_oversubscribed(ctx.comm, tessera::app::omp_threads());
  for (auto& c : commands)
    if (c.sub && c.sub->parsed()) {
      if (!c.handles_stop_signals)
        tessera::heat2d::StopSignals::release_to_default();
      return c.run();
    }
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  // Before MPI starts (which takes a while): a stop signal that arrives during the set-up of a
  // heat2d run is kept and ends the run cleanly; other commands give the signals back their
  // default action (run_cli) and end at them.
  tessera::heat2d::StopSignals::catch_until_exit();
  const int provided = tessera::mpi::init_thread_multiple(&argc, &argv);
  tessera::app::Context ctx;
  ctx.comm = MPI_COMM_WORLD;
  ctx.rank = tessera::mpi::comm_rank(ctx.comm);
  ctx.nranks = tessera::mpi::comm_size(ctx.comm);
  ctx.thread_level = provided;
  ctx.command_line = joined_command_line(argc, argv);
  tessera::init_logging(ctx.rank, ctx.nranks);

  int code = 0;
  try {
    code = run_cli(ctx, argc, argv);
  } catch (const tessera::Error& e) {
    code = report_error(ctx, e.kind(), e.what(), e.collective());
  } catch (const std::bad_alloc&) {
    code = report_error(ctx, "resource error", "out of memory", false);
  } catch (const std::exception& e) {
    code = report_error(ctx, "error", e.what(), false);
  }
  // Every rank is here (an error only some ranks saw aborted the job above): HDF5 files left
  // open by the error are closed now, while MPI still works.
  tessera::io::close_abandoned_files();
  tessera::mpi::finalize();
  return code;
}
