// Entry point of `tessera`: the command line, MPI set-up, command dispatch, and the one place where
// errors turn into a message and an exit code.
#include <CLI/CLI.hpp>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/build_info.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "core/throw.hpp"
#include "cpu/transpose_tuner.hpp"
#include "io/h5_file.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"
#include "mpi/environment.hpp"
#include "mpi/launch_environment.hpp"
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

// The command line, parsed before MPI starts: `--version`, `--help` and usage errors end here
// without it (each rank of a launched job parses the same argv; the launcher's rank 0 prints).
struct Cli {
  Cli()
      : app("tessera: distributed transpose, reductions and heat solver for large matrices",
            "tessera") {}
  CLI::App app;
  std::vector<tessera::app::Command> commands;
  bool quiet = false, verbose = false;
  std::string wisdom, tuning, timing = "table";
};

void define_cli(Cli& cli, tessera::app::Context& ctx) {
  using namespace tessera::app;
  CLI::App& app = cli.app;
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tessera ") + TESSERA_VERSION + " (" +
                                        tessera::build_git_hash() + ")");
  app.add_flag("-q,--quiet", cli.quiet,
               "Errors only: no progress, warnings, log lines or timing table");
  app.add_flag("-v,--verbose", cli.verbose, "Debug output");
  app.add_option("--wisdom", cli.wisdom,
                 "File of kernel choices measured earlier on this kind of processor: reused, and "
                 "extended with new ones (default: $TESSERA_WISDOM, else "
                 "$XDG_CACHE_HOME/tessera/wisdom; 'none': no file)");
  app.add_option("--tuning", cli.tuning,
                 "measure: time candidate kernels on first use of a large shape; estimate: "
                 "never time (default: $TESSERA_TUNING, else measure where a plan runs many "
                 "times — heat2d, bench — and estimate for one-shot commands)")
      ->check(CLI::IsMember({"measure", "estimate"}));
  app.add_option("--timing", cli.timing, "What commands print at their end: off, table or json")
      ->check(CLI::IsMember({"off", "table", "json"}))
      ->capture_default_str();

  cli.commands = {add_info(app, ctx),     add_run(app, ctx),       add_check(app, ctx),
                  add_generate(app, ctx), add_transpose(app, ctx), add_reduce(app, ctx),
                  add_bench(app, ctx),    add_selftest(app, ctx),  add_deck(app, ctx)};
}

// After MPI has started: the parsed settings take effect and the chosen command runs.
int run_command(Cli& cli, tessera::app::Context& ctx) {
  ctx.timing = cli.timing == "off"    ? tessera::app::Timing::Off
               : cli.timing == "json" ? tessera::app::Timing::Json
                                      : tessera::app::Timing::Table;
  tessera::init_logging(ctx.rank, ctx.nranks,
                        cli.quiet     ? tessera::Verbosity::Quiet
                        : cli.verbose ? tessera::Verbosity::Verbose
                                      : tessera::Verbosity::Normal);
  // A misspelt TESSERA_* setting fails here, before any work (the library alone would only warn
  // where it reads one).
  tessera::mpi::collectively(ctx.comm, [] {
    const std::vector<std::string> problems = tessera::settings::environment_problems();
    std::string text;
    for (const std::string& p : problems)
      text += (text.empty() ? "" : "; ") + p;
    TESSERA_REQUIRE(problems.empty(), InputError, "{}", text);
  });
  if (!cli.wisdom.empty())
    tessera::cpu::set_wisdom_file(cli.wisdom == "none" ? std::string() : cli.wisdom);
  tessera::cpu::use_wisdom_cache();
  if (!cli.tuning.empty())
    tessera::cpu::set_tuning(cli.tuning == "estimate" ? tessera::cpu::Tuning::Estimate
                                                      : tessera::cpu::Tuning::Measure);
  // Collective; before any work, so that a slow run's cause shows first.
  tessera::mpi::fit_threads_to_node(ctx.comm);
  for (auto& c : cli.commands)
    if (c.sub && c.sub->parsed()) {
      if (!c.handles_stop_signals)
        tessera::heat2d::StopSignals::end_at_signal(ctx.rank == 0);
      if (!c.repeats_plans && cli.tuning.empty())
        tessera::cpu::set_default_tuning(tessera::cpu::Tuning::Estimate);
      return c.run();
    }
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  // Before MPI starts (which takes a while): a stop signal that arrives during the set-up of a
  // heat2d run is kept and ends the run cleanly; other commands end at them, removing what they
  // were writing (run_command: StopSignals::end_at_signal).
  tessera::heat2d::StopSignals::catch_until_exit();
  tessera::app::Context ctx;
  ctx.rank = tessera::mpi::launcher_rank();
  ctx.command_line = joined_command_line(argc, argv);
  Cli cli;
  define_cli(cli, ctx);
  try {
    cli.app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Every rank parses the same argv, so every rank ends here, before MPI has started.
    if (ctx.rank == 0)
      return cli.app.exit(e);
    return e.get_exit_code();
  }

  tessera::mpi::prefer_node_local_transports();
  ctx.thread_level = tessera::mpi::init_thread_multiple(&argc, &argv);
  ctx.comm = MPI_COMM_WORLD;
  ctx.rank = tessera::mpi::comm_rank(ctx.comm);
  ctx.nranks = tessera::mpi::comm_size(ctx.comm);
  tessera::init_logging(ctx.rank, ctx.nranks);

  int code = 0;
  try {
    code = run_command(cli, ctx);
  } catch (const tessera::Error& e) {
    code = report_error(ctx, e.kind(), e.what(), e.collective());
  } catch (const std::bad_alloc&) {
    code = report_error(ctx, "resource error", "out of memory", false);
  } catch (const std::exception& e) {
    code = report_error(ctx, "error", e.what(), false);
  }
  // The command has said how it ended; a signal during the shutdown adds nothing to that.
  tessera::heat2d::StopSignals::stop_reporting();
  // Every rank is here (an error only some ranks saw aborted the job above): HDF5 files left
  // open by the error are closed now, while MPI still works. Where one cannot be closed, HDF5
  // would crash inside MPI_Finalize and other ranks may wait inside their close: the process
  // ends without it (one rank), or the job is aborted; the error has been reported already.
  if (!tessera::io::close_abandoned_files()) {
    if (ctx.nranks == 1)
      std::_Exit(code == 0 ? 1 : code);
    tessera::mpi::abort_reported(ctx.comm, code == 0 ? 1 : code);
  }
  tessera::mpi::finalize();
  return code;
}
