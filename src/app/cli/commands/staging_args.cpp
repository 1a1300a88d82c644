// The shared out-of-core command-line options.
#include "cli/commands/staging_args.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands/byte_size.hpp"

namespace tessera::app {

void StagingArgs::add_to(CLI::App* sub, const char* verb, bool with_shape) {
  sub->add_option("--memory-limit", memory_limit,
                  "Host memory per rank, e.g. 2GiB: for the streaming buffers (default 256MiB), "
                  "or with --in-memory for the matrix blocks (which stream when they do not fit)");
  sub->add_flag("--out-of-core", out_of_core,
                "Stream through bounded buffers (the default for a single run; with --repeat too)");
  sub->add_flag("--in-memory", in_memory,
                "Read the whole matrix into memory first (within --memory-limit, else it streams)")
      ->excludes(sub->get_option("--out-of-core"));
  sub->add_option("--staging-depth", staging_depth,
                  fmt::format("Out of core: chunks read ahead of the {} (and written behind "
                              "it) (>= 1)",
                              verb))
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  sub->add_option("--chunk-size", chunk_size,
                  "Out of core: input bytes per chunk, all ranks together, e.g. 64MiB "
                  "(default: as large as --memory-limit allows)");
  if (with_shape)
    sub->add_option("--chunk-shape", chunk_shape,
                    "Out of core: chunks of whole input columns (contiguous writes) or of whole "
                    "input rows (contiguous reads)")
        ->check(CLI::IsMember({"columns", "rows"}))
        ->capture_default_str();
  sub->add_option("--io-cpu", io_cpu, "Out of core: pin the I/O thread to this CPU")
      ->check(CLI::Range(0, 1 << 20));
}

void StagingArgs::parse() {
  if (!memory_limit.empty())
    limit_ = parse_byte_size(memory_limit, "--memory-limit");
  if (!chunk_size.empty())
    chunk_bytes_ = parse_byte_size(chunk_size, "--chunk-size");
}

void StagingArgs::apply(ops::OutOfCoreOptions& o) const {
  o.memory_limit = limit_;
  o.chunk_bytes = chunk_bytes_;
  o.staging_depth = staging_depth;
  o.io_cpu = io_cpu;
  o.chunk_shape = ops::parse_chunk_shape(chunk_shape);
}

} // namespace tessera::app
