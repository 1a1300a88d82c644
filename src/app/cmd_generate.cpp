// tessera generate
#include "app/commands.hpp"
#include "core/throw.hpp"

namespace tessera::app {

Command add_generate(CLI::App& app, const Context& ctx) {
  Command c;
  c.sub = app.add_subcommand("generate", "(not available yet)");
  c.run = []() -> int { TESSERA_THROW(NotCompiled, "'generate' is not available yet"); };
  return c;
}

} // namespace tessera::app
