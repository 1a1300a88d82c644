// tessera run [DECK.toml] [--set key=value]... [--backend auto|cpu|cuda]
#include <CLI/CLI.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "cli/jobs/jobs.hpp"
#include "core/log.hpp"
#include "mpi/agreement.hpp"
#include "solver/stop_signal.hpp"

namespace tessera::app {

namespace {

std::string kinds_help() {
  std::string s = "Job kinds:";
  for (const auto& k : job_kinds())
    s += fmt::format("\n  {:<10} {}", k.name, k.summary);
  return s;
}

} // namespace

Command add_run(CLI::App& app, const Context& ctx) {
  struct Args {
    std::string deck;
    std::vector<std::string> sets;
    std::string backend;
    std::string restart;
  };
  auto args = std::make_shared<Args>();
  Command c;
  c.repeats_plans = true;
  c.sub = app.add_subcommand("run", "Run a job deck (no deck: the embedded default job)");
  c.sub->add_option("deck", args->deck, "TOML job deck (docs/decks.md)");
  add_deck_overrides(c.sub, args->sets);
  c.sub->add_option("--backend", args->backend, "Same as --set job.backend=…")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  c.sub
      ->add_option("--restart", args->restart,
                   "Continue a heat2d run from its checkpoint: same as --set restart.file=…")
      ->type_name("CKPT.h5");
  c.sub->footer(kinds_help());
  c.handles_stop_signals = true;
  c.run = [args, &ctx]() -> int {
    auto sets = args->sets;
    if (!args->backend.empty())
      sets.push_back("job.backend=" + args->backend);
    if (!args->restart.empty())
      sets.push_back("restart.file=" + args->restart);
    std::optional<Deck> deck;
    mpi::collectively(ctx.comm, [&] {
      deck.emplace(
          load_deck(args->deck.empty() ? std::nullopt : std::optional<std::string>(args->deck),
                    sets, ctx.nranks));
    });
    const JobKind& kind = find_job_kind(deck->get<std::string>("job.kind"));
    if (!kind.stops_on_signal)
      heat2d::StopSignals::end_at_signal(ctx.rank == 0); // this job ends at the signal
    log::info("running job '{}' from {}", kind.name, deck->source());
    return kind.run(*deck, ctx);
  };
  return c;
}

} // namespace tessera::app
