// tessera check DECK.toml [--set key=value]...: validates a deck as `tessera run` would on as many
// ranks (the same load_deck()), opens the files it reads (read-only) and prints its effective
// settings (every key, defaults included) as TOML on stdout.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>

#include "cli/commands.hpp"
#include "cli/jobs/jobs.hpp"
#include "core/log.hpp"
#include "mpi/agreement.hpp"

namespace tessera::app {

Command add_check(CLI::App& app, const Context& ctx) {
  struct Args {
    std::string deck;
    std::vector<std::string> sets;
  };
  auto args = std::make_shared<Args>();
  Command c;
  c.sub = app.add_subcommand("check", "Validate a deck and print its effective settings");
  c.sub->add_option("deck", args->deck, "TOML job deck ('-' or none: the embedded default)");
  add_deck_overrides(c.sub, args->sets);
  c.run = [args, &ctx]() -> int {
    std::optional<Deck> deck;
    const bool embedded = args->deck.empty() || args->deck == "-";
    mpi::collectively(ctx.comm, [&] {
      deck.emplace(
          load_deck_with_files(embedded ? std::nullopt : std::optional<std::string>(args->deck),
                               args->sets, ctx.comm, ctx.nranks));
    });
    if (ctx.rank == 0) {
      std::fputs(deck->effective_toml().c_str(), stdout);
      std::fflush(stdout);
    }
    log::info("{}: valid {} deck", deck->source(), deck->get<std::string>("job.kind"));
    return 0;
  };
  return c;
}

} // namespace tessera::app
