// tessera generate OUT.h5:/A --rows M --cols N [--dtype f64] [--seed S]: a reproducible random
// matrix (ops/random_fill.hpp), the same for any rank count.
#include <CLI/CLI.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "cli/commands/byte_size.hpp"
#include "cli/jobs/run_info.hpp"
#include "core/dtype.hpp"
#include "core/format_bytes.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/provenance.hpp"
#include "mpi/agreement.hpp"
#include "ops/host_matrix.hpp"
#include "ops/out_of_core_choice.hpp"

namespace tessera::app {

Command add_generate(CLI::App& app, const Context& ctx) {
  struct Args {
    std::string out;
    std::int64_t rows = -1, cols = -1;
    std::string dtype = "f64";
    std::uint64_t seed = 42;
    std::int64_t chunk_rows = 0;
    int deflate = 0;
  };
  auto args = std::make_shared<Args>();
  Command c;
  c.sub = app.add_subcommand("generate", "Write a reproducible random matrix to FILE.h5:/dataset");
  c.sub->add_option("output", args->out, "Output dataset FILE.h5:/path (the file is replaced)")
      ->required();
  c.sub->add_option("--rows", args->rows, "Rows M")->required();
  c.sub->add_option("--cols", args->cols, "Columns N")->required();
  c.sub->add_option("--dtype", args->dtype, "Element type: f32, f64, c64, c128")
      ->capture_default_str();
  c.sub->add_option("--seed", args->seed, "Seed; values depend only on seed and position")
      ->capture_default_str();
  c.sub->add_option("--chunk-rows", args->chunk_rows, "HDF5 chunk rows (0: contiguous)");
  c.sub->add_option("--deflate", args->deflate, "gzip level 0-9")->check(CLI::Range(0, 9));
  c.run = [args, &ctx]() -> int {
    // Argument checks see the same values on every rank: they fail together.
    // Agreed all the same, so that the error is reported once and every rank exits cleanly.
    io::DatasetRef ref;
    DType dtype{};
    mpi::collectively(ctx.comm, [&] {
      ref = io::DatasetRef::parse(args->out);
      dtype = parse_matrix_dtype(args->dtype);
      if (args->rows <= 0 || args->cols <= 0)
        TESSERA_THROW(InputError,
                      "zero-size matrix: --rows {} --cols {}; rows and columns must be positive",
                      args->rows, args->cols);
    });
    const Shape shape{args->rows, args->cols};
    // The matrix is made in memory: one that does not fit what a rank may use fails now, with
    // a message, rather than by the kernel's OOM killer halfway through.
    const auto [room, room_source] = ops::room_per_rank(ctx.comm);
    mpi::collectively(ctx.comm, [&] {
      const double need = ops::in_memory_bytes({shape, dtype, false}, ctx.nranks);
      if (need > room)
        TESSERA_THROW(ResourceError,
                      "generating the {} {} matrix needs {} per rank in memory, more than the {} "
                      "this process may use ({}); run it on more ranks or nodes",
                      shape.str(), dtype_name(dtype), format_bytes(need), format_bytes(room),
                      room_source);
    });
    PhaseTimers timers;
    io::H5File f = io::H5File::create(ref.file, ctx.comm);
    ops::HostMatrix a = ops::generate_matrix(shape, dtype, args->seed, ctx.comm, timers);
    ops::write_matrix(f, ref.path, a, {args->chunk_rows, 0, args->deflate}, timers);
    io::write_attribute(f, ref.path, "seed", static_cast<long long>(args->seed));
    io::write_provenance(f, make_provenance(ctx, "", Backend::Cpu));
    f.commit();
    log::info("wrote {}: {} {}, seed {}, {}", ref.str(), shape.str(), dtype_name(dtype), args->seed,
              format_bytes(a.global_bytes()));
    print_timing_table(timers, ctx);
    return 0;
  };
  return c;
}

} // namespace tessera::app
