// Job kind "pipeline": generate (or read) a matrix, transpose it, reduce it, and write what was
// asked to one HDF5 file. Keys: docs/decks.md; output layout: docs/output.md.
#include <optional>

#include "app/host_matrix.hpp"
#include "app/jobs.hpp"
#include "app/run_info.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/provenance.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"

namespace tessera::app {

void pipeline_schema(DeckSchema& s) {
  s.add("matrix.rows", std::int64_t{1000}, "rows M of the generated matrix", 1);
  s.add("matrix.cols", std::int64_t{999}, "columns N of the generated matrix", 1);
  s.add("matrix.dtype", std::string("f64"), "element type: f32, f64, c64, c128",
        {"f32", "f64", "c64", "c128"});
  s.add("matrix.seed", std::int64_t{42}, "values depend only on seed and position", 0);
  s.add("matrix.input", std::string(""), "\"FILE.h5:/dataset\": read it instead of generating");
  s.add("transpose.enabled", true, "transpose the matrix");
  s.add("transpose.exchange", std::string("auto"), "auto, alltoallv, pairwise, pipelined",
        {"auto", "alltoallv", "pairwise", "pipelined"});
  s.add("transpose.repeat", std::int64_t{1}, "executions of the plan (for timing)", 1);
  s.add("reduce.enabled", true, "reduce the matrix (f32/f64 only)");
  s.add("reduce.ops", std::vector<std::string>{"sum", "norm2", "max"},
        "sum, min, max, mean, norm1, norm2, norminf",
        {"sum", "min", "max", "mean", "norm1", "norm2", "norminf"});
  s.add("reduce.axis", std::string("all"), "all, rows (one value per row) or cols",
        {"all", "rows", "cols"});
  s.add("output.file", std::string("tessera-pipeline.h5"), "HDF5 output; \"\" writes none");
  s.add("output.write_input", true, "store the matrix as /input");
  s.add("output.write_transpose", true, "store the transpose as /transpose");
  s.add("output.chunk_rows", std::int64_t{0}, "HDF5 chunk rows (0: contiguous)", 0);
  s.add("output.chunk_cols", std::int64_t{0}, "HDF5 chunk columns (0: whole rows)", 0);
  s.add("output.deflate", std::int64_t{0}, "gzip level 0-9 (chunks are chosen if not given)", 0, 9);
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
  std::string output;
  bool write_input = true, write_transpose = true;
  io::WriteOptions write;
};

PipelineSettings read_settings(const Deck& deck) {
  PipelineSettings s;
  if (const auto in = deck.get<std::string>("matrix.input"); !in.empty()) {
    try {
      s.input = io::DatasetRef::parse(in);
    } catch (const InputError& e) {
      deck.fail("matrix.input", "{}", e.what());
    }
    for (const char* k : {"matrix.rows", "matrix.cols", "matrix.dtype", "matrix.seed"})
      if (deck.has(k))
        log::warn("{}: {} is ignored: the matrix is read from {}", deck.where(k), k, in);
  }
  s.shape = {deck.get<std::int64_t>("matrix.rows"), deck.get<std::int64_t>("matrix.cols")};
  s.dtype = parse_dtype(deck.get<std::string>("matrix.dtype"));
  s.seed = static_cast<std::uint64_t>(deck.get<std::int64_t>("matrix.seed"));
  s.transpose = deck.get<bool>("transpose.enabled");
  s.exchange = parse_exchange(deck.get<std::string>("transpose.exchange"));
  s.repeat =
      static_cast<int>(std::min<std::int64_t>(deck.get<std::int64_t>("transpose.repeat"), 1 << 30));
  s.reduce = deck.get<bool>("reduce.enabled");
  for (const auto& op : deck.get<std::vector<std::string>>("reduce.ops"))
    s.ops.push_back(parse_op(op));
  if (s.reduce && s.ops.empty())
    deck.fail("reduce.ops", "is empty; list at least one operation or set reduce.enabled = false");
  s.axis = parse_axis(deck.get<std::string>("reduce.axis"));
  s.output = deck.get<std::string>("output.file");
  s.write_input = deck.get<bool>("output.write_input");
  s.write_transpose = deck.get<bool>("output.write_transpose");
  s.write.chunk_rows = deck.get<std::int64_t>("output.chunk_rows");
  s.write.chunk_cols = deck.get<std::int64_t>("output.chunk_cols");
  s.write.deflate = static_cast<int>(deck.get<std::int64_t>("output.deflate"));
  if (s.input && !s.output.empty() && same_file(s.input->file, s.output))
    deck.fail("output.file", "'{}' is also the input file; choose another output file", s.output);
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

} // namespace

int run_pipeline_job(const Deck& deck, const Context& ctx) {
  const PipelineSettings s = read_settings(deck);
  PhaseTimers timers;
  const Backend backend =
      mpi::resolve_backend(parse_backend(deck.get<std::string>("job.backend")), ctx.comm);

  // The output is created first, so an unwritable directory fails before any work.
  std::optional<io::H5File> out;
  if (!s.output.empty())
    out.emplace(io::H5File::create(s.output, ctx.comm));

  HostMatrix a = s.input ? read_matrix(*s.input, ctx, timers)
                         : generate_matrix(s.shape, s.dtype, s.seed, ctx, timers);
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
    write_matrix(*out, "/input", a, s.write, timers);
    written.push_back("/input " + a.shape().str());
  }
  if (s.transpose) {
    TransposeRun run;
    HostMatrix at = transpose_matrix(a, backend, s.exchange, s.repeat, ctx, timers, &run);
    log::info("transpose: {} -> {} ({} exchange), {:.3f} s", a.shape().str(), at.shape().str(),
              exchange_name(run.exchange), run.seconds);
    if (out && s.write_transpose) {
      write_matrix(*out, "/transpose", at, s.write, timers);
      written.push_back("/transpose " + at.shape().str());
    }
  }
  if (s.reduce) {
    const ReduceResult r = reduce_matrix(a, s.ops, s.axis, backend, ctx, timers);
    for (std::size_t k = 0; k < r.ops.size(); ++k)
      log::info("reduce {} over {}: {}", op_name(r.ops[k]), axis_name(r.axis),
                describe_result(r, k));
    if (out) {
      write_reductions(*out, "/reductions", r, a.shape(), "/input", ctx, timers);
      written.push_back(
          fmt::format("/reductions ({} op{})", r.ops.size(), r.ops.size() == 1 ? "" : "s"));
    }
  }
  if (out) {
    io::write_provenance(*out, make_provenance(ctx, deck.effective_toml(), backend));
    out->commit();
    log::info("wrote {}: {}", s.output, fmt::join(written, ", "));
  }
  print_timing_table(timers, ctx);
  return 0;
}

} // namespace tessera::app
