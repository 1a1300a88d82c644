// tessera bench
#include "app/commands.hpp"
#include "core/throw.hpp"

namespace tessera::app {

Command add_bench(CLI::App& app, const Context& ctx) {
  Command c;
  c.sub = app.add_subcommand("bench", "(not available yet)");
  c.run = []() -> int { TESSERA_THROW(NotCompiled, "'bench' is not available yet"); };
  return c;
}

} // namespace tessera::app
