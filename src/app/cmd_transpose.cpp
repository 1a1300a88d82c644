// tessera transpose IN.h5:/A OUT.h5:/AT [--backend …] [--exchange …] [--memory-limit SIZE]
// In memory when the blocks fit --memory-limit (or none is given), out of core otherwise
// (io/out_of_core.hpp): the dataset then streams through buffers that fit the limit.
#include <algorithm>

#include "app/byte_size.hpp"
#include "app/commands.hpp"
#include "app/host_matrix.hpp"
#include "app/out_of_core_choice.hpp"
#include "app/run_info.hpp"
#include "app/staging_args.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/out_of_core.hpp"
#include "io/provenance.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"

namespace tessera::app {

Command add_transpose(CLI::App& app, const Context& ctx) {
  struct Args {
    std::string in, out;
    std::string backend = "auto";
    std::string exchange = "auto";
    int repeat = 1;
    std::int64_t chunk_rows = 0;
    int deflate = 0;
    StagingArgs staging;
  };
  auto args = std::make_shared<Args>();
  Command c;
  c.sub = app.add_subcommand("transpose", "Transpose a dataset into a new file");
  c.sub->add_option("input", args->in, "Input dataset FILE.h5:/path (2-D)")->required();
  c.sub->add_option("output", args->out, "Output dataset FILE.h5:/path (the file is replaced)")
      ->required();
  c.sub->add_option("--backend", args->backend, "auto, cpu or cuda")->capture_default_str();
  c.sub->add_option("--exchange", args->exchange, "auto, alltoallv, pairwise, pipelined or nccl")
      ->capture_default_str();
  args->staging.add_to(c.sub, "transpose", true);
  c.sub->add_option("--repeat", args->repeat, "Executions of the plan (timing)")
      ->check(CLI::Range(1, 1 << 30));
  c.sub->add_option("--chunk-rows", args->chunk_rows, "HDF5 chunk rows of the output");
  c.sub->add_option("--deflate", args->deflate, "gzip level 0-9")->check(CLI::Range(0, 9));
  c.run = [args, &ctx]() -> int {
    // Argument checks see the same values on every rank; agreed, the error is reported once.
    io::DatasetRef in, out;
    Backend requested{};
    Exchange exchange{};
    std::size_t limit = 0;
    mpi::collectively(ctx.comm, [&] {
      in = io::DatasetRef::parse(args->in);
      out = io::DatasetRef::parse(args->out);
      requested = parse_backend(args->backend);
      exchange = parse_exchange(args->exchange);
      args->staging.parse();
      limit = args->staging.limit();
      if (same_file(in.file, out.file))
        TESSERA_THROW(InputError,
                      "the output file {} is also the input file; write the transpose to "
                      "another file",
                      out.file);
    });

    PhaseTimers timers;
    const Backend backend = mpi::resolve_backend(requested, ctx.comm);
    // Open the input before creating the output: a missing input leaves no output behind.
    io::DatasetInfo info;
    {
      io::H5File probe = io::H5File::open_read(in.file, ctx.comm);
      info = io::inspect_dataset(probe, in.path);
    }
    mpi::collectively(ctx.comm, [&] { require_nonempty(info, in); });
    const StagingChoice choice{limit, args->staging.out_of_core};
    if (stream_out_of_core(choice, {info.shape, info.dtype, true}, ctx.nranks, true, in.str())) {
      if (args->repeat > 1)
        log::warn("--repeat {} is ignored out of core: the transpose runs once", args->repeat);
      const io::Provenance provenance = make_provenance(ctx, "", backend);
      io::OutOfCoreOptions o;
      args->staging.apply(o);
      o.backend = backend;
      o.exchange = exchange;
      o.write = {args->chunk_rows, 0, args->deflate};
      o.provenance = &provenance;
      o.dataset_attributes = {{"transpose_of", in.str()}};
      o.timers = &timers;
      const io::OutOfCoreReport r = io::transpose_out_of_core(in, out, o, ctx.comm);
      log::info("wrote {}: {} {} = transpose of {} (out of core: {}, {} of buffers per rank, "
                "{:.3f} s)",
                out.str(), info.shape.transposed().str(), dtype_name(info.dtype), in.str(),
                r.chunks_str(), format_bytes(double(r.buffer_bytes)), r.seconds);
      print_timing_table(timers, ctx);
      return 0;
    }
    io::H5File f = io::H5File::create(out.file, ctx.comm);
    HostMatrix a = read_matrix(in, ctx, timers);
    TransposeRun run;
    HostMatrix at = transpose_matrix(a, backend, exchange, args->repeat, ctx, timers, &run);
    write_matrix(f, out.path, at, {args->chunk_rows, 0, args->deflate}, timers);
    io::write_attribute(f, out.path, "transpose_of", in.str());
    io::write_provenance(f, make_provenance(ctx, "", run.backend));
    f.commit();
    log::info("wrote {}: {} {} = transpose of {} ({} backend, {} exchange, {:.3f} s)", out.str(),
              at.shape().str(), dtype_name(at.dtype()), in.str(), backend_name(run.backend),
              exchange_name(run.exchange), run.seconds);
    print_timing_table(timers, ctx);
    return 0;
  };
  return c;
}

} // namespace tessera::app
