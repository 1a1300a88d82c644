// tessera deck OUT.h5: prints the effective deck that produced a tessera output (its root
// attribute `deck`, io/provenance.hpp) on stdout, ready to save and `tessera run`.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>

#include "cli/commands.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_file.hpp"
#include "mpi/agreement.hpp"

namespace tessera::app {

Command add_deck(CLI::App& app, const Context& ctx) {
  auto file = std::make_shared<std::string>();
  Command c;
  c.sub = app.add_subcommand("deck", "Print the effective deck that produced an output file");
  c.sub->add_option("file", *file, "An output of `tessera run` (FILE.h5)")->required();
  c.run = [file, &ctx]() -> int {
    std::optional<std::string> deck, command;
    {
      const io::H5File f = io::H5File::open_read(*file, ctx.comm);
      deck = io::read_string_attribute(f, "/", "deck");
      command = io::read_string_attribute(f, "/", "command_line");
    }
    mpi::collectively(ctx.comm, [&] {
      if (!deck)
        TESSERA_THROW(InputError,
                      "'{}' has no deck attribute: it was not written by tessera (tessera's "
                      "outputs carry the deck that produced them)",
                      *file);
      if (deck->empty())
        TESSERA_THROW(InputError,
                      "'{}' was written by a command that takes no deck ({}); its command line "
                      "is the root attribute command_line",
                      *file, command ? "`" + *command + "`" : std::string("unknown"));
    });
    if (ctx.rank == 0) {
      std::fputs(deck->c_str(), stdout);
      if (deck->back() != '\n')
        std::fputc('\n', stdout);
      std::fflush(stdout);
    }
    return 0;
  };
  return c;
}

} // namespace tessera::app
