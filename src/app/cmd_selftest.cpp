// tessera selftest
#include "app/commands.hpp"
#include "core/throw.hpp"

namespace tessera::app {

Command add_selftest(CLI::App& app, const Context& ctx) {
  Command c;
  c.sub = app.add_subcommand("selftest", "(not available yet)");
  c.run = []() -> int { TESSERA_THROW(NotCompiled, "'selftest' is not available yet"); };
  return c;
}

} // namespace tessera::app
