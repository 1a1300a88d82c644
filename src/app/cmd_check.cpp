// tessera check
#include "app/commands.hpp"
#include "core/throw.hpp"

namespace tessera::app {

Command add_check(CLI::App& app, const Context& ctx) {
  Command c;
  c.sub = app.add_subcommand("check", "(not available yet)");
  c.run = []() -> int { TESSERA_THROW(NotCompiled, "'check' is not available yet"); };
  return c;
}

} // namespace tessera::app
