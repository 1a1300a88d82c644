// The out-of-core options `tessera transpose` and `tessera reduce` share: --memory-limit,
// --out-of-core, --in-memory, --staging-depth, --chunk-size, --io-cpu (and --chunk-shape for the
// transpose).
#pragma once

#include <cstddef>
#include <string>

#include "ops/out_of_core.hpp"

// CLI11 is heavy to compile: the files that build subcommands include it themselves.
namespace CLI {
class App;
} // namespace CLI

namespace tessera::app {

struct StagingArgs {
  std::string memory_limit;
  std::string chunk_size;
  std::string chunk_shape = "columns";
  int staging_depth = 1;
  int io_cpu = -1;
  bool out_of_core = false;
  bool in_memory = false;

  // Adds the options to `sub`; `verb` says what compute does with a chunk ("transpose",
  // "reduction"), `with_shape` adds --chunk-shape.
  void add_to(CLI::App* sub, const char* verb, bool with_shape);

  // Checks the sizes (InputError naming the option). Call on every rank, collectively.
  void parse();
  std::size_t limit() const noexcept { return limit_; }

  // Whether a file job streams: by default (bounded, reused buffers, I/O overlapped with
  // compute: the fastest way from file to file), unless --in-memory or `repeat` > 1 executions
  // of one plan ask for the whole matrix in memory. --out-of-core always streams.
  bool stream(int repeat = 1) const noexcept { return out_of_core || (!in_memory && repeat <= 1); }

  // The out-of-core options these arguments set.
  void apply(ops::OutOfCoreOptions& o) const;

private:
  std::size_t limit_ = 0, chunk_bytes_ = 0;
};

} // namespace tessera::app
