// The --set option of `tessera run` and `tessera check`.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"

namespace tessera::app {

void add_deck_overrides(CLI::App* sub, std::vector<std::string>& sets) {
  sub->add_option("--set", sets, "Override a deck key: --set matrix.rows=2000")
      ->type_name("KEY=VALUE")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

} // namespace tessera::app
