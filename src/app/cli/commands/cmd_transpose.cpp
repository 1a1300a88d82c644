// tessera transpose IN.h5:/A OUT.h5:/AT [--backend …] [--exchange …] [--memory-limit SIZE]
// Streams through bounded, reused buffers (ops/out_of_core.hpp) unless --in-memory or --repeat
// asks for the whole matrix in memory and it fits --memory-limit.
// The output keeps the input's metadata: its attributes and fill value, its dimension scales
// (swapped, with their coordinates copied), and with --like-input its chunking and filters.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <set>

#include "cli/commands.hpp"
#include "cli/commands/byte_size.hpp"
#include "cli/commands/staging_args.hpp"
#include "cli/jobs/run_info.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_attribute_copy.hpp"
#include "io/h5_dimension_scales.hpp"
#include "io/provenance.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"
#include "ops/host_matrix.hpp"
#include "ops/out_of_core.hpp"
#include "ops/out_of_core_choice.hpp"

namespace tessera::app {

namespace {

// What the output takes over from the input dataset, read before the output is created.
struct Carried {
  io::DatasetAttributes attributes;
  io::WriteOptions write;
  struct Scale {
    io::DimensionScale scale; // of the input's dimension 1 - k for the output's dimension k
    io::VectorValues values;
  };
  std::vector<Scale> scales; // output dimension 0, then 1; an empty path: none
};

// Chunks and filters: from the flags, or with --like-input from the input (the chunk shape
// transposed), where a flag given explicitly still wins.
std::shared_ptr<Carried> carry(const io::H5File& in, const io::DatasetRef& ref,
                               const io::DatasetInfo& info, const io::WriteOptions& flags,
                               bool like_input, int rank) {
  auto c = std::make_shared<Carried>();
  c->attributes = io::DatasetAttributes::read(in, ref.path);
  const io::DatasetStorage storage = io::dataset_storage(in, ref.path, info.dtype);
  c->write = flags;
  if (like_input) {
    if (flags.chunk_rows == 0) {
      c->write.chunk_rows = storage.options.chunk_cols;
      c->write.chunk_cols = storage.options.chunk_rows;
    }
    if (flags.deflate == 0)
      c->write.deflate = storage.options.deflate;
    c->write.shuffle = flags.shuffle || storage.options.shuffle;
    if (!storage.dropped.empty() && rank == 0)
      log::warn("--like-input: the filters {} of {} are not written (tessera writes gzip and "
                "shuffle only)",
                fmt::join(storage.dropped, ", "), ref.str());
  }
  c->write.fill_value = storage.options.fill_value;
  if (!c->attributes.skipped().empty() && rank == 0)
    log::warn("attributes {} of {} are not copied: they hold object references or "
              "variable-length sequences",
              fmt::join(c->attributes.skipped(), ", "), ref.str());
  const std::vector<io::DimensionScale> scales = io::dimension_scales(in, ref.path);
  for (int k = 0; k < 2; ++k) {
    Carried::Scale s{
        scales.size() == 2 ? scales[static_cast<std::size_t>(1 - k)] : io::DimensionScale{}, {}};
    if (!s.scale.path.empty())
      s.values = io::read_vector_values(in, s.scale.path);
    c->scales.push_back(std::move(s));
  }
  return c;
}

// On the output dataset, once written: the input's attributes, then tessera's own, and the
// dimension scales swapped (each coordinate copied to the path it had in the input).
void apply(io::H5File& f, const io::DatasetRef& out, const io::DatasetRef& in, const Carried& c) {
  c.attributes.write(f, out.path);
  io::write_attribute(f, out.path, "transpose_of", in.str());
  std::set<std::string> written;
  for (unsigned k = 0; k < c.scales.size(); ++k) {
    const Carried::Scale& s = c.scales[k];
    if (s.scale.path.empty() || s.scale.path == out.path)
      continue;
    if (written.insert(s.scale.path).second)
      io::write_vector_values(f, s.scale.path, s.values);
    io::attach_dimension_scale(f, out.path, k, s.scale.path,
                               s.scale.name.empty() ? s.scale.path : s.scale.name);
  }
}

} // namespace

Command add_transpose(CLI::App& app, const Context& ctx) {
  struct Args {
    std::string in, out;
    std::string backend = "auto";
    std::string exchange = "auto";
    int repeat = 1;
    std::int64_t chunk_rows = 0;
    int deflate = 0;
    bool shuffle = false;
    bool like_input = false;
    StagingArgs staging;
  };
  auto args = std::make_shared<Args>();
  Command c;
  c.sub = app.add_subcommand("transpose", "Transpose a dataset into a new file");
  c.sub->add_option("input", args->in, "Input dataset FILE.h5:/path (2-D)")->required();
  c.sub->add_option("output", args->out, "Output dataset FILE.h5:/path (the file is replaced)")
      ->required();
  c.sub->add_option("--backend", args->backend, "auto, cpu or cuda")->capture_default_str();
  c.sub
      ->add_option("--exchange", args->exchange,
                   "auto, alltoallv, pairwise, pipelined, shared (every rank on one node) or nccl")
      ->capture_default_str();
  args->staging.add_to(c.sub, "transpose", true);
  c.sub->add_option("--repeat", args->repeat, "Executions of the plan (timing)")
      ->check(CLI::Range(1, 1 << 30));
  c.sub->add_option("--chunk-rows", args->chunk_rows, "HDF5 chunk rows of the output");
  c.sub->add_option("--deflate", args->deflate, "gzip level 0-9")->check(CLI::Range(0, 9));
  c.sub->add_flag("--shuffle", args->shuffle,
                  "HDF5 shuffle filter before gzip (chunked output; compresses floats better)");
  c.sub->add_flag("--like-input", args->like_input,
                  "Chunk shape (transposed), gzip level and shuffle of the input dataset; "
                  "--chunk-rows and --deflate still override");
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
    const Backend backend = mpi::resolve_backend_for_host_data(requested, ctx.comm);
    // Open the input before creating the output: a missing input leaves no output behind.
    MatrixInput input = MatrixInput::open(in, ctx.comm);
    const io::DatasetInfo info = input.info;
    mpi::collectively(ctx.comm, [&] { require_nonempty(info, in); });
    const std::shared_ptr<Carried> carried =
        carry(*input.file, in, info,
              {{.chunk_rows = args->chunk_rows, .deflate = args->deflate}, args->shuffle},
              args->like_input, ctx.rank);
    const StagingChoice choice{limit, args->staging.stream(args->repeat)};
    if (stream_out_of_core(choice, input, true, ctx.comm)) {
      input.close();
      if (args->repeat > 1)
        log::warn("--repeat {} is ignored out of core: the transpose runs once", args->repeat);
      const io::Provenance provenance = make_provenance(ctx, "", backend);
      io::OutOfCoreOptions o;
      args->staging.apply(o);
      o.backend = backend;
      o.exchange = exchange;
      o.write = carried->write;
      o.provenance = &provenance;
      o.before_commit = [carried, out, in](io::H5File& f) { apply(f, out, in, *carried); };
      o.timers = &timers;
      const io::OutOfCoreReport r = io::transpose_out_of_core(in, out, o, ctx.comm);
      log::info("wrote {}: {} {} = transpose of {} (streamed: {}, {} of buffers per rank, "
                "{:.3f} s)",
                out.str(), info.shape.transposed().str(), dtype_name(info.dtype), in.str(),
                r.chunks_str(), format_bytes(double(r.buffer_bytes)), r.seconds);
      print_timing_table(timers, ctx);
      return 0;
    }
    io::H5File f = io::H5File::create(out.file, ctx.comm);
    HostMatrix a = read_matrix(input, ctx.comm, timers);
    TransposeRun run;
    HostMatrix at = transpose_matrix(a, backend, exchange, args->repeat, ctx.comm, timers, &run);
    write_matrix(f, out.path, at, carried->write, timers);
    apply(f, out, in, *carried);
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
