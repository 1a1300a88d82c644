// tessera run
#include "app/commands.hpp"
#include "core/throw.hpp"

namespace tessera::app {

Command add_run(CLI::App& app, const Context& ctx) {
  Command c;
  c.sub = app.add_subcommand("run", "(not available yet)");
  c.run = []() -> int { TESSERA_THROW(NotCompiled, "'run' is not available yet"); };
  return c;
}

} // namespace tessera::app
