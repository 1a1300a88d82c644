// tessera info
#include "app/commands.hpp"
#include "core/throw.hpp"

namespace tessera::app {

Command add_info(CLI::App& app, const Context& ctx) {
  Command c;
  c.sub = app.add_subcommand("info", "(not available yet)");
  c.run = []() -> int { TESSERA_THROW(NotCompiled, "'info' is not available yet"); };
  return c;
}

} // namespace tessera::app
