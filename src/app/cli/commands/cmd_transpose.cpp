// tessera transpose IN.h5:/A[,/B…] [IN2.h5:/C…] OUT.h5[:/AT[,/BT…]] [--axes …] [--mode append]
// [--backend …] [--exchange …] [--memory-limit SIZE]
// A 2-D dataset of a floating or complex type is a matrix transpose; any other rank, an integer
// type or an order of dimensions from --axes is a permutation of dimensions
// (ops/permute_dataset.hpp).
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
#include "ops/permute_axes.hpp"
#include "ops/permute_dataset.hpp"
#include "ops/permute_metadata.hpp"
#include "ops/transpose_metadata.hpp"

namespace tessera::app {

namespace {

struct TransposeArgs {
  std::vector<std::string> specs; // inputs, then the output
  std::string mode = "create";
  std::string backend = "auto";
  std::string exchange = "auto";
  std::string axes; // empty: the 2-D transpose
  int repeat = 1;
  std::int64_t chunk_rows = 0;
  int deflate = 0;
  bool shuffle = false;
  bool like_input = false;
  StagingArgs staging;
};

// A permutation of dimensions of one input into one output dataset. Collective.
void permute_one(const Context& ctx, const TransposeArgs& args, ops::ArrayInput& in,
                 const io::DatasetRef& out, io::H5File::Mode mode, Backend backend,
                 std::size_t limit, const std::vector<int>& axes) {
  if (ctx.rank == 0 && args.repeat > 1)
    log::warn("--repeat applies to matrix transposes; {} is permuted once", out.str());
  // Chunks along the output's outermost dimension (--chunk-rows), gzip and shuffle, as for a
  // matrix; --like-input: the input's chunk shape permuted.
  const io::WriteOptions write = ops::permuted_storage(
      *in.file, in.ref, in.info.dtype, axes,
      {{.chunk_rows = args.chunk_rows, .deflate = args.deflate}, args.shuffle}, args.like_input,
      ctx.rank);
  PhaseTimers timers;
  const io::Provenance provenance = make_provenance(ctx, "", backend);
  std::vector<std::string> names;
  for (const int a : axes) {
    const std::string& name = in.dim_names[static_cast<std::size_t>(a)];
    names.push_back(name.empty() ? fmt::format("dim{}", a) : name);
  }
  const DType dtype = in.info.dtype;
  ops::PermuteOptions o{axes, limit, mode, &provenance, &timers, write};
  o.backend = backend; // Cpu unless --backend cuda (file data stays on the CPU under auto)
  const ops::PermuteReport r = ops::permute_dataset(in, out, o, ctx.comm);
  log::info("wrote {}: {} {} {} = {} permuted by axes {} ({} backend, pieces: {}, {} of buffers "
            "per rank, {:.3f} s)",
            out.str(), fmt::join(r.shape, "x"), dtype_name(dtype), ops::describe_dimensions(names),
            in.ref.str(), fmt::join(axes, ","), backend_name(backend), r.pieces,
            format_bytes(double(r.buffer_bytes)), r.seconds);
  print_timing_table(timers, ctx);
}

// One input to one output dataset. Collective.
void transpose_one(const Context& ctx, TransposeArgs& args, const io::DatasetRef& in,
                   const io::DatasetRef& out, io::H5File::Mode mode, Backend backend,
                   Exchange exchange, std::size_t limit) {
  {
    // The matrix transpose (exchanges between ranks, streaming, GPUs) takes 2-D floating and
    // complex data in the order (1, 0); a permutation of dimensions takes everything else.
    ops::ArrayInput array = ops::ArrayInput::open(in, ctx.comm);
    std::vector<int> axes;
    mpi::collectively(ctx.comm,
                      [&] { axes = ops::resolve_axes(args.axes, array.dim_names, in.str()); });
    if (array.info.dims.size() != 2 || axes != std::vector<int>{1, 0} ||
        dtype_is_integer(array.info.dtype)) {
      permute_one(ctx, args, array, out, mode, backend, limit, axes);
      return;
    }
  } // closes the input: the matrix transpose opens it its own way
  PhaseTimers timers;
  // Open the input before creating the output: a missing input leaves no output behind.
  ops::MatrixInput input = ops::MatrixInput::open(in, ctx.comm);
  const io::DatasetInfo info = input.info;
  mpi::collectively(ctx.comm, [&] { ops::require_nonempty(info, in); });
  const std::shared_ptr<const ops::TransposeMetadata> carried = ops::TransposeMetadata::read(
      *input.file, in, info,
      {{.chunk_rows = args.chunk_rows, .deflate = args.deflate}, args.shuffle}, args.like_input,
      ctx.rank);
  const ops::StagingChoice choice{limit, args.staging.stream(args.repeat)};
  if (ops::stream_out_of_core(choice, input, true, ctx.comm)) {
    input.close();
    if (args.repeat > 1)
      log::warn("--repeat {} is ignored out of core: the transpose runs once", args.repeat);
    const io::Provenance provenance = make_provenance(ctx, "", backend);
    ops::OutOfCoreOptions o;
    args.staging.apply(o);
    o.backend = backend;
    o.exchange = exchange;
    o.write = carried->write;
    o.provenance = &provenance;
    o.append = mode == io::H5File::Mode::Append;
    o.before_commit = [carried, out, in](io::H5File& f) { carried->write_to(f, out, in); };
    o.timers = &timers;
    const ops::OutOfCoreReport r = ops::transpose_out_of_core(in, out, o, ctx.comm);
    log::info("wrote {}: {} {} = transpose of {} (streamed: {}, {} of buffers per rank, "
              "{:.3f} s)",
              out.str(), info.shape.transposed().str(), dtype_name(info.dtype), in.str(),
              r.chunks_str(), format_bytes(double(r.buffer_bytes)), r.seconds);
    print_timing_table(timers, ctx);
    return;
  }
  io::H5File f = io::H5File::create(out.file, ctx.comm, mode);
  ops::HostMatrix a = ops::read_matrix(input, ctx.comm, timers);
  ops::TransposeRun run;
  ops::HostMatrix at =
      ops::transpose_matrix(a, backend, exchange, args.repeat, ctx.comm, timers, &run);
  ops::write_matrix(f, out.path, at, carried->write, timers);
  carried->write_to(f, out, in);
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
    if (io::same_file(ins[k].file, outs[k].file))
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
      ->add_option(
          "datasets", args->specs,
          "Input datasets FILE.h5:/path (rank 1 to 8; FILE.h5:/a,/b for several), then the "
          "output OUT.h5:/path (OUT.h5:/x,/y for several; OUT.h5 alone: the input paths)")
      ->required()
      ->expected(2, CLI::detail::expected_max_vector_size);
  c.sub
      ->add_option("--mode", args->mode,
                   "create (w): replace the output file; append (a): add to it, keeping its "
                   "datasets (a copy is written and renamed over it when complete)")
      ->capture_default_str();
  c.sub->add_option("--axes", args->axes,
                    "The output's order of the input's dimensions, by name (time,lon,lat: netCDF "
                    "dimensions or HDF5 dimension scales) or by index (0,2,1); needed for arrays "
                    "of rank other than 2, whose dimensions are permuted (any element type, "
                    "integers included)");
  c.sub->add_option("--backend", args->backend, "auto, cpu or cuda")->capture_default_str();
  c.sub
      ->add_option("--exchange", args->exchange,
                   "auto, alltoallv, pairwise, pipelined, shared (every rank on one node) or nccl")
      ->capture_default_str();
  args->staging.add_to(c.sub, "transpose", true);
  c.sub->add_option("--repeat", args->repeat, "Executions of the plan (timing)")
      ->check(CLI::Range(1, 1 << 30));
  c.sub->add_option("--chunk-rows", args->chunk_rows,
                    "HDF5 chunk rows of the output (N-D: chunk extent along its outermost "
                    "dimension)");
  c.sub->add_option("--deflate", args->deflate, "gzip level 0-9")->check(CLI::Range(0, 9));
  c.sub->add_flag("--shuffle", args->shuffle,
                  "HDF5 shuffle filter before gzip (chunked output; compresses floats better)");
  c.sub->add_flag("--like-input", args->like_input,
                  "Chunk shape (transposed or permuted), gzip level and shuffle of the input "
                  "dataset; "
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
