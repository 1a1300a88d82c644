// Job kind "pipeline": generate (or read) a matrix, transpose it, reduce it, and write what was
// asked to one HDF5 file. Keys: docs/decks.md; output layout: docs/output.md.
#include <optional>

#include "cli/commands/byte_size.hpp"
#include "cli/jobs/jobs.hpp"
#include "cli/jobs/run_info.hpp"
#include "core/dtype.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/provenance.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"
#include "ops/host_matrix.hpp"
#include "ops/matrix_input.hpp"
#include "ops/out_of_core.hpp"
#include "ops/out_of_core_choice.hpp"
#include "ops/transpose_metadata.hpp"

namespace tessera::app {

namespace {

// A byte size ("2GiB") or "" for none.
std::string byte_size_problem(const DeckValue& v) {
  const auto& text = std::get<std::string>(v);
  if (text.empty())
    return {};
  try {
    parse_byte_size(text, "");
  } catch (const InputError&) {
    return fmt::format("'{}' is not a size (expected a positive number of bytes with an optional "
                       "unit: 4096, 512MiB, 2GiB, 1.5GB; \"\": none)",
                       text);
  }
  return {};
}

std::string dataset_ref_problem(const DeckValue& v) {
  const auto& text = std::get<std::string>(v);
  if (text.empty())
    return {};
  try {
    io::DatasetRef::parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

} // namespace

void pipeline_schema(DeckSchema& s) {
  s.add("matrix.rows", std::int64_t{1000}, "rows M of the generated matrix", 1);
  s.add("matrix.cols", std::int64_t{999}, "columns N of the generated matrix", 1);
  s.add("matrix.dtype", std::string("f64"), "element type: f32, f64, c64, c128",
        {"f32", "f64", "c64", "c128"});
  s.add("matrix.seed", std::int64_t{42}, "values depend only on seed and position", 0);
  s.add("matrix.input", std::string(""), "\"FILE.h5:/dataset\": read it instead of generating")
      .checked_by(dataset_ref_problem);
  s.add("transpose.enabled", true, "transpose the matrix");
  s.add("transpose.exchange", std::string("auto"),
        "auto, alltoallv, pairwise, pipelined, shared (one node), nccl",
        {"auto", "alltoallv", "pairwise", "pipelined", "shared", "nccl"});
  s.add("transpose.repeat", std::int64_t{1}, "executions of the plan (for timing)", 1);
  s.add("reduce.enabled", true, "reduce the matrix (f32/f64 only)");
  s.add("reduce.ops", std::vector<std::string>{"sum", "norm2", "max"},
        "sum, min, max, mean, norm1, norm2, norminf, count (the elements that are not missing)",
        {"sum", "min", "max", "mean", "norm1", "norm2", "norminf", "count"})
      .distinct_items();
  s.add("reduce.axis", std::string("all"), "all, rows (one value per row) or cols",
        {"all", "rows", "cols"});
  s.add("reduce.keep_nan", false,
        "matrix.input: NaN counts as data (IEEE semantics); _FillValue, missing_value and "
        "valid_range elements are skipped either way");
  s.add("output.file", std::string("tessera-pipeline.h5"), "HDF5 output; \"\" writes none");
  s.add("output.write_input", true, "store the matrix as /input");
  s.add("output.write_transpose", true, "store the transpose as /transpose");
  s.add("output.chunk_rows", std::int64_t{0}, "HDF5 chunk rows (0: contiguous)", 0);
  s.add("output.chunk_cols", std::int64_t{0}, "HDF5 chunk columns (0: whole rows)", 0);
  s.add("output.deflate", std::int64_t{0}, "gzip level 0-9 (chunks are chosen if not given)", 0, 9);
  s.add("staging.memory_limit", std::string(""),
        "host memory per rank, e.g. \"2GiB\"; a matrix.input that does not fit streams through "
        "out of core; \"\": no limit")
      .checked_by(byte_size_problem);
  s.add("staging.out_of_core", false, "stream matrix.input out of core even when it fits");
  s.add("staging.depth", std::int64_t{1}, "out of core: chunks read ahead and written behind", 1,
        64);
  s.add("staging.chunk_size", std::string(""),
        "out of core: input bytes per chunk, all ranks together, e.g. \"64MiB\"; \"\": as large "
        "as staging.memory_limit allows")
      .checked_by(byte_size_problem);
  s.add("staging.chunk_shape", std::string("columns"),
        "out of core: chunks of whole input \"rows\" (contiguous reads) or \"columns\" "
        "(contiguous writes)",
        {"rows", "columns"});
  s.add("staging.io_cpu", std::int64_t{-1}, "out of core: pin the I/O thread to this CPU (-1: no)",
        -1);
}

namespace {

struct PipelineSettings {
  std::optional<io::DatasetRef> input;
  Shape shape;
  DType dtype = DType::f64;
  std::uint64_t seed = 0;
  bool transpose = true;
  Exchange exchange = Exchange::Auto;
  int repeat = 1;
  bool reduce = true;
  std::vector<Op> ops;
  Axis axis = Axis::All;
  bool keep_nan = false;
  std::string output;
  bool write_input = true, write_transpose = true;
  io::WriteOptions write;
  bool out_of_core = false;
  // The staging keys: memory_limit (0: none), staging_depth, chunk_shape, chunk_bytes (0: from
  // the memory limit), io_cpu; the out-of-core run starts from these options.
  ops::OutOfCoreOptions staging;
};

// A byte size deck key ("2GiB"); 0 when empty (or bad: the schema's check recorded that).
std::size_t byte_size_key(const Deck& deck, const char* key) {
  const auto text = deck.get<std::string>(key);
  if (text.empty() || deck.has_problem(key))
    return 0;
  return parse_byte_size(text, key);
}

// The settings of a checked deck; the rules between keys are recorded as deck problems (the
// kind's check reads the settings once for them).
PipelineSettings read_settings(const Deck& deck) {
  PipelineSettings s;
  if (const auto in = deck.get<std::string>("matrix.input"); !in.empty()) {
    if (!deck.has_problem("matrix.input"))
      s.input = io::DatasetRef::parse(in);
  }
  s.shape = {deck.get<std::int64_t>("matrix.rows"), deck.get<std::int64_t>("matrix.cols")};
  // Keys whose value the schema refused keep their parse for the run that never comes.
  const auto ok = [&](const char* key) { return !deck.has_problem(key); };
  if (ok("matrix.dtype"))
    s.dtype = parse_matrix_dtype(deck.get<std::string>("matrix.dtype"));
  s.seed = static_cast<std::uint64_t>(deck.get<std::int64_t>("matrix.seed"));
  s.transpose = deck.get<bool>("transpose.enabled");
  if (ok("transpose.exchange"))
    s.exchange = parse_exchange(deck.get<std::string>("transpose.exchange"));
  s.repeat =
      static_cast<int>(std::min<std::int64_t>(deck.get<std::int64_t>("transpose.repeat"), 1 << 30));
  s.reduce = deck.get<bool>("reduce.enabled");
  if (ok("reduce.ops"))
    for (const auto& op : deck.get<std::vector<std::string>>("reduce.ops"))
      s.ops.push_back(parse_op(op));
  if (s.reduce && s.ops.empty() && ok("reduce.ops"))
    deck.problem("reduce.ops",
                 "is empty; list at least one operation or set reduce.enabled = false");
  if (ok("reduce.axis"))
    s.axis = parse_axis(deck.get<std::string>("reduce.axis"));
  s.keep_nan = deck.get<bool>("reduce.keep_nan");
  s.output = deck.get<std::string>("output.file");
  s.write_input = deck.get<bool>("output.write_input");
  s.write_transpose = deck.get<bool>("output.write_transpose");
  s.write.chunk_rows = deck.get<std::int64_t>("output.chunk_rows");
  s.write.chunk_cols = deck.get<std::int64_t>("output.chunk_cols");
  s.write.deflate = static_cast<int>(deck.get<std::int64_t>("output.deflate"));
  s.staging.memory_limit = byte_size_key(deck, "staging.memory_limit");
  s.staging.chunk_bytes = byte_size_key(deck, "staging.chunk_size");
  s.out_of_core = deck.get<bool>("staging.out_of_core");
  s.staging.staging_depth = static_cast<int>(deck.get<std::int64_t>("staging.depth"));
  s.staging.io_cpu = static_cast<int>(deck.get<std::int64_t>("staging.io_cpu"));
  if (ok("staging.chunk_shape"))
    s.staging.chunk_shape = ops::parse_chunk_shape(deck.get<std::string>("staging.chunk_shape"));
  if (s.input && !s.output.empty() && io::same_file(s.input->file, s.output))
    deck.problem("output.file",
                 fmt::format("'{}' is also the input file; choose another output file", s.output));
  return s;
}

std::string describe_result(const ReduceResult& r, std::size_t k) {
  const auto& v = r.values[k];
  if (r.axis == Axis::All)
    return fmt::format("{:.17g}", v.at(0));
  std::string s = fmt::format("{} values", v.size());
  if (!v.empty())
    s += fmt::format(", first {:.17g}, last {:.17g}", v.front(), v.back());
  return s;
}

// The pipeline on a matrix.input streamed out of core: reductions first (read-ahead), then the
// transpose written into the output file, which also receives /reductions before it is
// committed. The matrix itself is not copied to /input. `info`: what opening it learnt.
int run_out_of_core(const Deck& deck, const PipelineSettings& s, const ops::MatrixInput& input,
                    const ops::TransposeMetadata& carried, Backend backend, const Context& ctx) {
  const io::DatasetInfo& info = input.info;
  PhaseTimers timers;
  if (s.write_input && !s.output.empty())
    log::info("pipeline: out of core, the matrix stays in {} (output.write_input is ignored)",
              s.input->str());
  ops::OutOfCoreOptions o = s.staging;
  o.backend = backend;
  o.exchange = s.exchange;
  o.write = carried.write;
  o.missing = input.missing;
  o.timers = &timers;
  const io::Provenance provenance = make_provenance(ctx, deck.effective_toml(), backend);
  o.provenance = &provenance;

  if (s.reduce && !dtype_is_real(info.dtype))
    TESSERA_THROW(InputError,
                  "reductions take f32 or f64 data, and {} is {}; set reduce.enabled = false",
                  s.input->str(), dtype_name(info.dtype));
  std::optional<ReduceResult> r;
  if (s.reduce) {
    r = ops::reduce_out_of_core(*s.input, s.ops, s.axis, o, ctx.comm);
    for (std::size_t k = 0; k < r->ops.size(); ++k)
      log::info("reduce {} over {}: {}", op_name(r->ops[k]), axis_name(r->axis),
                describe_result(*r, k));
  }
  std::vector<std::string> written;
  const auto add_reductions = [&](io::H5File& f) {
    if (!r)
      return;
    ops::write_reductions(f, "/reductions", *r, info.shape, s.input->str(), ctx.comm, timers);
    written.push_back(
        fmt::format("/reductions ({} op{})", r->ops.size(), r->ops.size() == 1 ? "" : "s"));
  };
  if (s.transpose && !s.output.empty() && s.write_transpose) {
    o.before_commit = [&](io::H5File& f) {
      carried.write_to(f, {s.output, "/transpose"}, *s.input);
      add_reductions(f);
    };
    written.push_back("/transpose " + info.shape.transposed().str());
    const ops::OutOfCoreReport rep =
        ops::transpose_out_of_core(*s.input, {s.output, "/transpose"}, o, ctx.comm);
    log::info("transpose: {} -> {} out of core, {}, {:.3f} s", info.shape.str(),
              info.shape.transposed().str(), rep.chunks_str(), rep.seconds);
  } else if (!s.output.empty()) {
    if (s.transpose)
      log::info("pipeline: the transpose is not stored (output.write_transpose = false); out of "
                "core it is skipped");
    io::H5File out = io::H5File::create(s.output, ctx.comm);
    carried.globals.write(out, "/", {}, io::DatasetAttributes::Existing::Keep);
    add_reductions(out);
    io::write_provenance(out, provenance);
    out.commit();
  }
  if (!s.output.empty())
    log::info("wrote {}: {}", s.output, fmt::join(written, ", "));
  print_timing_table(timers, ctx);
  return 0;
}

} // namespace

void check_pipeline_job(const Deck& deck, int /*nranks*/) {
  read_settings(deck);
}

void check_pipeline_files(const Deck& deck, MPI_Comm comm) {
  if (deck.has_problem("matrix.input"))
    return;
  const PipelineSettings s = read_settings(deck);
  if (!s.input)
    return;
  // The same opening as the run's (missing file or dataset, not 2-D, an element type tessera
  // cannot read); the error is collective, so every rank records the same problem.
  try {
    ops::MatrixInput in = ops::MatrixInput::open(*s.input, comm);
    if (s.reduce && !dtype_is_real(in.info.dtype))
      deck.problem("matrix.input", fmt::format("reductions take f32 or f64 data, and {} is {}; set "
                                               "reduce.enabled = false",
                                               s.input->str(), dtype_name(in.info.dtype)));
    in.close();
  } catch (const Error& e) {
    deck.problem("matrix.input", e.what());
  }
}

int run_pipeline_job(const Deck& deck, const Context& ctx) {
  const PipelineSettings s = read_settings(deck);
  deck.throw_problems(); // none: load_deck() checked the deck
  if (s.input)
    for (const char* k : {"matrix.rows", "matrix.cols", "matrix.dtype", "matrix.seed"})
      if (deck.has(k))
        log::warn("{}: {} is ignored: the matrix is read from {}", deck.where(k), k,
                  s.input->str());
  PhaseTimers timers;
  const Backend backend =
      mpi::resolve_backend(parse_backend(deck.get<std::string>("job.backend")), ctx.comm);
  // The matrix streams out of core (ops/out_of_core_choice.hpp) only when it is a matrix.input
  // that staging.out_of_core asks to stream, or whose blocks do not fit staging.memory_limit.
  // A matrix.input to reduce is opened with its missing values and packing (skipped and
  // decoded by the reductions, as `tessera reduce` does); its metadata goes with its copies.
  ops::MatrixInput input =
      !s.input   ? ops::MatrixInput::generated(s.shape, s.dtype)
      : s.reduce ? ops::MatrixInput::open_for_reduction(*s.input, ctx.comm, s.keep_nan)
                 : ops::MatrixInput::open(*s.input, ctx.comm);
  std::shared_ptr<const ops::TransposeMetadata> carried;
  if (s.input)
    carried =
        ops::TransposeMetadata::read(*input.file, *s.input, input.info, s.write, false, ctx.rank);
  const io::WriteOptions write = carried ? carried->write : s.write;
  const ops::StagingChoice choice{s.staging.memory_limit, s.out_of_core, "staging.memory_limit"};
  if (ops::stream_out_of_core(choice, input, s.transpose, ctx.comm)) {
    input.close();
    return run_out_of_core(deck, s, input, *carried, backend, ctx);
  }

  // The output is created first, so an unwritable directory fails before any work.
  std::optional<io::H5File> out;
  if (!s.output.empty())
    out.emplace(io::H5File::create(s.output, ctx.comm));

  ops::HostMatrix a = s.input ? ops::read_matrix(input, ctx.comm, timers)
                              : ops::generate_matrix(s.shape, s.dtype, s.seed, ctx.comm, timers);
  log::info("pipeline: {} {} matrix ({}) on {} rank{} x {} thread{}, backend {}", a.shape().str(),
            dtype_name(a.dtype()),
            s.input ? "read from " + s.input->str() : fmt::format("generated, seed {}", s.seed),
            ctx.nranks, ctx.nranks == 1 ? "" : "s", omp_threads(), omp_threads() == 1 ? "" : "s",
            backend_name(backend));
  if (s.reduce && !dtype_is_real(a.dtype()))
    TESSERA_THROW(InputError,
                  "reductions take f32 or f64 data, and the matrix is {}; set reduce.enabled = "
                  "false or use a real matrix.dtype",
                  dtype_name(a.dtype()));

  std::vector<std::string> written;
  if (out && s.write_input) {
    ops::write_matrix(*out, "/input", a, write, timers);
    if (carried)
      carried->write_copy_to(*out, "/input");
    written.push_back("/input " + a.shape().str());
  }
  if (s.transpose) {
    ops::TransposeRun run;
    ops::HostMatrix at =
        ops::transpose_matrix(a, backend, s.exchange, s.repeat, ctx.comm, timers, &run);
    log::info("transpose: {} -> {} ({} exchange), {:.3f} s", a.shape().str(), at.shape().str(),
              exchange_name(run.exchange), run.seconds);
    if (out && s.write_transpose) {
      ops::write_matrix(*out, "/transpose", at, write, timers);
      if (carried)
        carried->write_to(*out, {s.output, "/transpose"}, *s.input);
      written.push_back("/transpose " + at.shape().str());
    }
  }
  if (s.reduce) {
    const ReduceResult r =
        ops::reduce_matrix(a, s.ops, s.axis, backend, ctx.comm, timers, nullptr, input.missing);
    for (std::size_t k = 0; k < r.ops.size(); ++k)
      log::info("reduce {} over {}: {}", op_name(r.ops[k]), axis_name(r.axis),
                describe_result(r, k));
    if (out) {
      // "of": the matrix as this file holds it, else where it came from.
      const std::string of = s.write_input ? "/input"
                             : s.input     ? s.input->str()
                                           : fmt::format("a generated matrix (seed {})", s.seed);
      ops::write_reductions(*out, "/reductions", r, a.shape(), of, ctx.comm, timers);
      written.push_back(
          fmt::format("/reductions ({} op{})", r.ops.size(), r.ops.size() == 1 ? "" : "s"));
    }
  }
  if (out) {
    if (carried && !s.write_input && !(s.transpose && s.write_transpose))
      carried->globals.write(*out, "/", {}, io::DatasetAttributes::Existing::Keep);
    io::write_provenance(*out, make_provenance(ctx, deck.effective_toml(), backend));
    out->commit();
    log::info("wrote {}: {}", s.output, fmt::join(written, ", "));
  }
  print_timing_table(timers, ctx);
  return 0;
}

} // namespace tessera::app
