// tessera reduce
#include "app/commands.hpp"
#include "core/throw.hpp"

namespace tessera::app {

Command add_reduce(CLI::App& app, const Context& ctx) {
  Command c;
  c.sub = app.add_subcommand("reduce", "(not available yet)");
  c.run = []() -> int { TESSERA_THROW(NotCompiled, "'reduce' is not available yet"); };
  return c;
}

} // namespace tessera::app
