// tessera transpose
#include "app/commands.hpp"
#include "core/throw.hpp"

namespace tessera::app {

Command add_transpose(CLI::App& app, const Context& ctx) {
  Command c;
  c.sub = app.add_subcommand("transpose", "(not available yet)");
  c.run = []() -> int { TESSERA_THROW(NotCompiled, "'transpose' is not available yet"); };
  return c;
}

} // namespace tessera::app
