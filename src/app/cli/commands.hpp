// The subcommands of `tessera`. Each add_* registers its CLI11 subcommand and returns the
// action main() runs when that subcommand was chosen. Actions return the process exit code and
// may throw tessera::Error; main() turns errors into one line and a non-zero exit.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

// CLI11 is heavy to compile: the files that build subcommands include it themselves.
namespace CLI {
class App;
} // namespace CLI

namespace tessera::app {

// What a command prints at its end about where the time went (--timing).
enum class Timing { Off, Table, Json };

struct Context {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int nranks = 1;
  int thread_level = 0;     // provided by MPI_Init_thread
  std::string command_line; // as typed, for provenance
  Timing timing = Timing::Table;
};

struct Command {
  CLI::App* sub = nullptr;
  std::function<int()> run;
  // main() catches SIGTERM and SIGUSR1 from its first line (heat2d::StopSignals); a command that
  // does not handle them ends at them (and at SIGINT), removing the outputs it was writing
  // (StopSignals::end_at_signal). `run` decides itself, by job kind.
  bool handles_stop_signals = false;
  // Whether the command executes its plans many times (heat2d steps, benchmarks): there a timed
  // trial of the kernels pays; elsewhere tuning defaults to estimate (cpu/transpose_tuner.hpp).
  bool repeats_plans = false;
};

Command add_info(CLI::App& app, const Context& ctx);
Command add_run(CLI::App& app, const Context& ctx);
Command add_check(CLI::App& app, const Context& ctx);
Command add_generate(CLI::App& app, const Context& ctx);
Command add_transpose(CLI::App& app, const Context& ctx);
Command add_reduce(CLI::App& app, const Context& ctx);
Command add_bench(CLI::App& app, const Context& ctx);
Command add_selftest(CLI::App& app, const Context& ctx);
Command add_deck(CLI::App& app, const Context& ctx);

// The --set KEY=VALUE option of the commands that read a deck (run, check), repeatable.
void add_deck_overrides(CLI::App* sub, std::vector<std::string>& sets);

} // namespace tessera::app
