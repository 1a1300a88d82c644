// tessera transpose IN.h5:/A[,/B…] [IN2.h5:/C…] OUT.h5[:/AT[,/BT…]] [--mode append] [--backend …]
// [--exchange …] [--memory-limit SIZE]
// Streams through bounded, reused buffers (ops/out_of_core.hpp) unless --in-memory or --repeat
// asks for the whole matrix in memory and it fits --memory-limit.
// The output keeps the input's metadata: its attributes and fill value, its dimension scales
// (swapped, with their coordinates, their attributes and their stored type copied), the input
// file's global attributes, and with --like-input its chunking and filters.
// Several datasets go to the output one after the other, each added to what the previous ones
// wrote (io/output_append.cpp): the file is complete after each.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <set>

#include "app/commands.hpp"
#include "app/commands/byte_size.hpp"
#include "app/commands/staging_args.hpp"
#include "app/jobs/run_info.hpp"
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
  io::DatasetAttributes globals; // of the input file's root group

  io::WriteOptions write;
  struct Scale {
    io::DimensionScale scale; // of the input's dimension 1 - k for the output's dimension k
    io::VectorValues values;
    io::DatasetAttributes attributes; // units, long_name, axis, …
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
  c->globals = io::DatasetAttributes::read(in, "/");
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
    Carried::Scale s{scales.size() == 2 ? scales[static_cast<std::size_t>(1 - k)]
                                        : io::DimensionScale{},
                     {},
                     {}};
    if (!s.scale.path.empty()) {
      s.values = io::read_vector_values(in, s.scale.path);
      s.attributes = io::DatasetAttributes::read(in, s.scale.path);
    }
    c->scales.push_back(std::move(s));
  }
  return c;
}

// On the output dataset, once written: the input's attributes, then tessera's own, and the
// dimension scales swapped (each coordinate copied to the path it had in the input, unless the
// output has it already: from an earlier dataset of the same call, or of the file appended to);
// on the root, the input file's global attributes (tessera's provenance, written later, wins).
void apply(io::H5File& f, const io::DatasetRef& out, const io::DatasetRef& in, const Carried& c) {
  c.globals.write(f, "/");
  c.attributes.write(f, out.path);
  io::write_attribute(f, out.path, "transpose_of", in.str());
  std::set<std::string> written;
  for (unsigned k = 0; k < c.scales.size(); ++k) {
    const Carried::Scale& s = c.scales[k];
    if (s.scale.path.empty() || s.scale.path == out.path)
      continue;
    if (written.insert(s.scale.path).second && !io::has_dataset(f, s.scale.path)) {
      io::write_vector_values(f, s.scale.path, s.values);
      s.attributes.write(f, s.scale.path);
    }
    io::attach_dimension_scale(f, out.path, k, s.scale.path,
                               s.scale.name.empty() ? s.scale.path : s.scale.name);
  }
}

struct TransposeArgs {
  std::vector<std::string> specs; // inputs, then the output
  std::string mode = "create";
  std::string backend = "auto";
  std::string exchange = "auto";
  int repeat = 1;
  std::int64_t chunk_rows = 0;
  int deflate = 0;
  bool shuffle = false;
  bool like_input = false;
  StagingArgs staging;
};

// One input to one output dataset. Collective.
void transpose_one(const Context& ctx, TransposeArgs& args, const io::DatasetRef& in,
                   const io::DatasetRef& out, io::H5File::Mode mode, Backend backend,
                   Exchange exchange, std::size_t limit) {
  PhaseTimers timers;
  // Open the input before creating the output: a missing input leaves no output behind.
  MatrixInput input = MatrixInput::open(in, ctx.comm);
  const io::DatasetInfo info = input.info;
  mpi::collectively(ctx.comm, [&] { require_nonempty(info, in); });
  const std::shared_ptr<Carried> carried =
      carry(*input.file, in, info,
            {{.chunk_rows = args.chunk_rows, .deflate = args.deflate}, args.shuffle},
            args.like_input, ctx.rank);
  const StagingChoice choice{limit, args.staging.stream(args.repeat)};
  if (stream_out_of_core(choice, input, true, ctx.comm)) {
    input.close();
    if (args.repeat > 1)
      log::warn("--repeat {} is ignored out of core: the transpose runs once", args.repeat);
    const io::Provenance provenance = make_provenance(ctx, "", backend);
    io::OutOfCoreOptions o;
    args.staging.apply(o);
    o.backend = backend;
    o.exchange = exchange;
    o.write = carried->write;
    o.provenance = &provenance;
    o.append = mode == io::H5File::Mode::Append;
    o.before_commit = [carried, out, in](io::H5File& f) { apply(f, out, in, *carried); };
    o.timers = &timers;
    const io::OutOfCoreReport r = io::transpose_out_of_core(in, out, o, ctx.comm);
    log::info("wrote {}: {} {} = transpose of {} (streamed: {}, {} of buffers per rank, "
              "{:.3f} s)",
              out.str(), info.shape.transposed().str(), dtype_name(info.dtype), in.str(),
              r.chunks_str(), format_bytes(double(r.buffer_bytes)), r.seconds);
    print_timing_table(timers, ctx);
    return;
  }
  io::H5File f = io::H5File::create(out.file, ctx.comm, mode);
  HostMatrix a = read_matrix(input, ctx.comm, timers);
  TransposeRun run;
  HostMatrix at = transpose_matrix(a, backend, exchange, args.repeat, ctx.comm, timers, &run);
  write_matrix(f, out.path, at, carried->write, timers);
  apply(f, out, in, *carried);
  io::write_provenance(f, make_provenance(ctx, "", run.backend));
  f.commit();
  log::info("wrote {}: {} {} = transpose of {} ({} backend, {} exchange, {:.3f} s)", out.str(),
            at.shape().str(), dtype_name(at.dtype()), in.str(), backend_name(run.backend),
            exchange_name(run.exchange), run.seconds);
  print_timing_table(timers, ctx);
}

// The (input, output) pairs of the command line: every input dataset (FILE:/a,/b, and further
// inputs), and the output OUT:/x,/y with as many datasets, or OUT alone (each transpose at its
// input's path).
std::vector<std::pair<io::DatasetRef, io::DatasetRef>>
pairs_of(const std::vector<std::string>& specs) {
  std::vector<io::DatasetRef> ins;
  for (std::size_t k = 0; k + 1 < specs.size(); ++k)
    for (io::DatasetRef& r : io::DatasetRef::parse_list(specs[k]))
      ins.push_back(std::move(r));
  const std::string& last = specs.back();
  std::vector<io::DatasetRef> outs;
  if (last.find(":/") == std::string::npos) {
    for (const io::DatasetRef& r : ins)
      outs.push_back({last, r.path});
  } else {
    outs = io::DatasetRef::parse_list(last);
  }
  if (outs.size() != ins.size())
    TESSERA_THROW(InputError,
                  "{} input datasets but {} output datasets in '{}'; name one output dataset per "
                  "input, or the output file alone to keep the input paths",
                  ins.size(), outs.size(), last);
  std::set<std::string> paths;
  std::vector<std::pair<io::DatasetRef, io::DatasetRef>> pairs;
  for (std::size_t k = 0; k < ins.size(); ++k) {
    if (!paths.insert(outs[k].path).second)
      TESSERA_THROW(InputError, "two transposes would be written to {} in '{}'", outs[k].path,
                    outs[k].file);
    if (outs[k].file != outs[0].file)
      TESSERA_THROW(InputError, "the outputs are in one file; '{}' and '{}' differ", outs[0].file,
                    outs[k].file);
    if (same_file(ins[k].file, outs[k].file))
      TESSERA_THROW(InputError,
                    "the output file {} is also the input file; write the transpose to "
                    "another file",
                    outs[k].file);
    pairs.emplace_back(ins[k], outs[k]);
  }
  return pairs;
}

io::H5File::Mode parse_mode(const std::string& m) {
  if (m == "create" || m == "w")
    return io::H5File::Mode::Replace;
  if (m == "append" || m == "a")
    return io::H5File::Mode::Append;
  TESSERA_THROW(InputError, "--mode: unknown mode '{}' (expected create or append, or w or a)", m);
}

} // namespace

Command add_transpose(CLI::App& app, const Context& ctx) {
  auto args = std::make_shared<TransposeArgs>();
  Command c;
  c.sub = app.add_subcommand("transpose", "Transpose datasets into a new file, or add them to one");
  c.sub
      ->add_option("datasets", args->specs,
                   "Input datasets FILE.h5:/path (2-D; FILE.h5:/a,/b for several), then the "
                   "output OUT.h5:/path (OUT.h5:/x,/y for several; OUT.h5 alone: the input paths)")
      ->required()
      ->expected(2, CLI::detail::expected_max_vector_size);
  c.sub
      ->add_option("--mode", args->mode,
                   "create (w): replace the output file; append (a): add to it, keeping its "
                   "datasets (a copy is written and renamed over it when complete)")
      ->capture_default_str();
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
    std::vector<std::pair<io::DatasetRef, io::DatasetRef>> pairs;
    io::H5File::Mode mode{};
    Backend requested{};
    Exchange exchange{};
    std::size_t limit = 0;
    mpi::collectively(ctx.comm, [&] {
      pairs = pairs_of(args->specs);
      mode = parse_mode(args->mode);
      requested = parse_backend(args->backend);
      exchange = parse_exchange(args->exchange);
      args->staging.parse();
      limit = args->staging.limit();
    });
    const Backend backend = mpi::resolve_backend_for_host_data(requested, ctx.comm);
    for (std::size_t k = 0; k < pairs.size(); ++k)
      transpose_one(ctx, *args, pairs[k].first, pairs[k].second,
                    k == 0 ? mode : io::H5File::Mode::Append, backend, exchange, limit);
    return 0;
  };
  return c;
}

} // namespace tessera::app
