// tessera reduce IN.h5:/A[,/B…] [IN2.h5:/C…] --op sum,norm2,max [--axis all|rows|cols]
// [--backend …] [--json] [--keep-nan] [--memory-limit SIZE]: in memory when this rank's rows fit
// the limit (or none is given), out of core otherwise (ops/out_of_core.hpp), with the same
// values bit for bit. Missing values (_FillValue, missing_value, NaN) are skipped and packed
// data decoded (io/missing_values.hpp, mpi/reduce_masked.hpp). Several datasets are reduced
// one after the other, each printed as it is done (--json: one object per line).
// With --dims NAMES --output OUT.h5 an N-D dataset is reduced over those dimensions into one
// variable per op over the others (ops/reduce_dims.hpp), each further dataset's added to the same
// file; --json prints them (one object per dataset and line), with or without --output.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/commands/byte_size.hpp"
#include "cli/commands/staging_args.hpp"
#include "cli/jobs/run_info.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/missing_values.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"
#include "ops/host_matrix.hpp"
#include "ops/out_of_core.hpp"
#include "ops/out_of_core_choice.hpp"
#include "ops/permute_axes.hpp"
#include "ops/reduce_dims.hpp"

namespace tessera::app {

namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\')
      out += {'\\', ch};
    else if (c < 0x20)
      out += fmt::format("\\u{:04x}", c);
    else
      out += ch;
  }
  return out + "\"";
}

// JSON has no inf or nan: they become null.
std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : "null";
}

// The names of a comma-separated --op list, as given.
std::vector<std::string> split_ops(std::string_view list) {
  std::vector<std::string> names;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    names.emplace_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return names;
}

std::string json_result(const std::vector<double>& v, Axis axis) {
  if (axis == Axis::All)
    return json_number(v.at(0));
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? "," : "") + json_number(v[i]);
  return out + "]";
}

// Values over `shape` (row-major) as nested JSON arrays, as numpy's tolist() nests them.
std::string json_nested(const std::vector<double>& v, const std::vector<std::int64_t>& shape) {
  std::string out;
  std::size_t at = 0;
  const auto emit = [&](const auto& self, std::size_t d) -> void {
    out += '[';
    for (std::int64_t i = 0; i < shape[d]; ++i) {
      if (i)
        out += ',';
      if (d + 1 < shape.size())
        self(self, d + 1);
      else
        out += json_number(v.at(at++));
    }
    out += ']';
  };
  emit(emit, 0);
  return out;
}

std::string json_names(const std::vector<std::string>& names) {
  std::string out = "[";
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i ? ", " : "") + json_string(names[i]);
  return out + "]";
}

struct ReduceArgs {
  std::vector<std::string> ins;
  std::string ops = "sum,norm2,max";
  std::string axis = "all";
  std::string backend = "auto";
  bool json = false;
  bool keep_nan = false;
  std::string dims;   // --dims: reduce over these dimensions of an N-D dataset
  std::string output; // --output: where --dims writes its variables
  int ddof = 0;       // --ddof: var and std divide by n - ddof
  std::int64_t chunk_rows = 0;
  int deflate = 0;
  bool shuffle = false;
  StagingArgs staging;
};

void reduce_one(const Context& ctx, ReduceArgs& args, const io::DatasetRef& in);
void reduce_over_dims(const Context& ctx, ReduceArgs& args, const io::DatasetRef& in,
                      io::H5File::Mode mode);

} // namespace

Command add_reduce(CLI::App& app, const Context& ctx) {
  auto args = std::make_shared<ReduceArgs>();
  Command c;
  c.sub = app.add_subcommand("reduce", "Reductions of a dataset (f32, f64 or integers)");
  c.sub
      ->add_option(
          "inputs", args->ins,
          "Input datasets FILE.h5:/path (2-D, or rank 2 to 8 with --dims; FILE.h5:/a,/b for "
          "several of a file)")
      ->required();
  CLI::Option* op_option =
      c.sub
          ->add_option("--op", args->ops,
                       "Comma-separated: sum, min, max, mean, norm1, norm2, norminf, count; "
                       "with --dims also var, std, argmin, argmax (default sum,mean,min,max)")
          ->capture_default_str();
  c.sub->add_option("--axis", args->axis, "all (one value), rows (one per row) or cols")
      ->capture_default_str();
  c.sub->add_option("--backend", args->backend, "auto, cpu or cuda")->capture_default_str();
  c.sub->add_flag("--json", args->json, "Print one JSON object with results and timings");
  c.sub->add_flag("--keep-nan", args->keep_nan,
                  "IEEE semantics: a NaN makes its results NaN (default: NaN is skipped, like "
                  "_FillValue and missing_value elements)");
  c.sub->add_option("--dims", args->dims,
                    "Reduce an N-D dataset over these dimensions (names or indices: lat,lon), "
                    "writing one variable per op over the others to --output");
  c.sub->add_option("--output", args->output,
                    "The file --dims writes: IN_PATH_op for each op (e.g. /temp_mean; argmin and "
                    "argmax: IN_PATH_argmin_DIM, one index per reduced dimension)");
  c.sub
      ->add_option("--ddof", args->ddof,
                   "var and std (--dims) divide by n - ddof: 0 the population variance (numpy's "
                   "default), 1 the sample variance")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  c.sub->add_option("--chunk-rows", args->chunk_rows,
                    "--dims outputs: HDF5 chunk extent along their outermost dimension");
  c.sub->add_option("--deflate", args->deflate, "--dims outputs: gzip level 0-9")
      ->check(CLI::Range(0, 9));
  c.sub->add_flag("--shuffle", args->shuffle,
                  "--dims outputs: HDF5 shuffle filter before gzip (chunked output)");
  args->staging.add_to(c.sub, "reduction", false);
  c.run = [args, op_option, &ctx]() -> int {
    if (!args->dims.empty() && op_option->count() == 0)
      args->ops = "sum,mean,min,max";
    std::vector<io::DatasetRef> refs;
    mpi::collectively(ctx.comm, [&] {
      for (const std::string& spec : args->ins)
        for (io::DatasetRef& r : io::DatasetRef::parse_list(spec))
          refs.push_back(std::move(r));
      if (!args->dims.empty()) {
        TESSERA_REQUIRE(!args->output.empty() || args->json, InputError,
                        "--dims writes one variable per op: name the file with --output OUT.h5 "
                        "(or print the values with --json)");
        // Each dataset's results are named after its path: two of one path would collide.
        for (std::size_t i = 0; i < refs.size(); ++i)
          for (std::size_t j = 0; j < i; ++j)
            TESSERA_REQUIRE(refs[i].path != refs[j].path || args->output.empty(), InputError,
                            "{} and {} would both write {}_OP to {}; reduce them in two calls",
                            refs[j].str(), refs[i].str(), refs[i].path, args->output);
      } else {
        for (const std::string& op : split_ops(args->ops))
          TESSERA_REQUIRE(!ops::dims_only(op), InputError,
                          "--op {}: var, std, argmin and argmax reduce over dimensions; name "
                          "them with --dims (e.g. --dims 1 for the columns of a matrix)",
                          op);
      }
    });
    if (!args->dims.empty()) {
      for (std::size_t k = 0; k < refs.size(); ++k)
        reduce_over_dims(ctx, *args, refs[k],
                         k == 0 ? io::H5File::Mode::Replace : io::H5File::Mode::Append);
      return 0;
    }
    for (const io::DatasetRef& in : refs)
      reduce_one(ctx, *args, in);
    return 0;
  };
  return c;
}

namespace {

// One N-D dataset over --dims, written to --output (`mode`: replacing the file or added to
// it) and with --json printed. Collective.
void reduce_over_dims(const Context& ctx, ReduceArgs& args, const io::DatasetRef& in,
                      io::H5File::Mode mode) {
  const double t0 = wall_seconds();
  ops::ReduceDimsOptions o;
  mpi::collectively(ctx.comm, [&] {
    args.staging.parse();
    o.memory_limit = args.staging.limit();
    o.ops = ops::parse_dims_ops(args.ops);
    TESSERA_REQUIRE(args.output.empty() || !io::same_file(in.file, args.output), InputError,
                    "the output file {} is also the input file; write to another file",
                    args.output);
  });
  o.ddof = args.ddof;
  o.write = {{.chunk_rows = args.chunk_rows, .deflate = args.deflate}, args.shuffle};
  PhaseTimers timers;
  ops::ArrayInput array = ops::ArrayInput::open(in, ctx.comm);
  const DType dtype = array.info.dtype;
  const std::vector<std::int64_t> shape = array.shape();
  mpi::collectively(ctx.comm,
                    [&] { o.reduced = ops::resolve_dims(args.dims, array.dim_names, in.str()); });
  o.missing = io::read_missing_values(*array.file, in.path, !args.keep_nan);
  o.output = args.output;
  o.mode = mode;
  o.gather = args.json;
  const io::Provenance provenance = make_provenance(ctx, "", Backend::Cpu);
  o.provenance = &provenance;
  o.timers = &timers;
  const ops::ReduceDimsReport r = ops::reduce_dims(array, o, ctx.comm);
  std::vector<std::string> paths;
  for (const auto& out : r.outputs)
    paths.push_back(out.path);
  if (!o.output.empty())
    log::info("wrote {} in {}: {} over {} of {} ({:.3f} s)", fmt::join(paths, ", "), o.output,
              fmt::join(r.shape, "x"), fmt::join(r.reduced_names, ","), in.str(), r.seconds);
  if (!args.json) {
    print_timing_table(timers, ctx);
    return;
  }
  if (ctx.rank == 0) {
    // One entry per op: the values over the kept dimensions, nested as numpy's tolist(); for
    // argmin and argmax an object of one such array per reduced dimension.
    std::string results, variables;
    for (std::size_t k = 0; k < r.outputs.size();) {
      const auto& out = r.outputs[k];
      const std::string name = json_string(ops::dims_op_name(out.op));
      const std::string sep = k ? ", " : "";
      if (out.dim.empty()) {
        results += fmt::format("{}{}: {}", sep, name, json_nested(out.values, r.shape));
        variables += fmt::format("{}{}: {}", sep, name, json_string(out.path));
        ++k;
        continue;
      }
      std::string per_dim, per_path;
      for (; k < r.outputs.size() && r.outputs[k].op == out.op; ++k) {
        const std::string dsep = per_dim.empty() ? "" : ", ";
        per_dim += fmt::format("{}{}: {}", dsep, json_string(r.outputs[k].dim),
                               json_nested(r.outputs[k].values, r.shape));
        per_path += fmt::format("{}{}: {}", dsep, json_string(r.outputs[k].dim),
                                json_string(r.outputs[k].path));
      }
      results += fmt::format("{}{}: {{{}}}", sep, name, per_dim);
      variables += fmt::format("{}{}: {{{}}}", sep, name, per_path);
    }
    std::string timings;
    for (const auto& [name, st] : timers.phases())
      if (name != "total")
        timings += fmt::format("{}: {}, ", json_string(name), json_number(st.seconds));
    const std::string line = fmt::format(
        "{{\"file\": {}, \"dataset\": {}, \"shape\": [{}], \"dtype\": {}, \"dims\": {}, "
        "\"kept\": {}, \"result_shape\": [{}], \"ddof\": {}, \"output\": {}, "
        "\"variables\": {{{}}}, \"results\": {{{}}}, \"timings\": {{{}\"total\": {}}}, "
        "\"ranks\": {}, \"threads\": {}, \"backend\": \"cpu\"}}\n",
        json_string(in.file), json_string(in.path), fmt::join(shape, ", "),
        json_string(dtype_name(dtype)), json_names(r.reduced_names), json_names(r.kept_names),
        fmt::join(r.shape, ", "), o.ddof, o.output.empty() ? "null" : json_string(o.output),
        variables, results, timings, json_number(wall_seconds() - t0), ctx.nranks, omp_threads());
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  }
  // stdout holds exactly the JSON objects; the table goes to stderr.
  print_timing_table(timers, ctx, stderr);
}

// One dataset: reduced, printed. Collective.
void reduce_one(const Context& ctx, ReduceArgs& args, const io::DatasetRef& in) {
  const double t0 = wall_seconds();
  // Argument checks see the same values on every rank; agreed, the error is reported once.
  std::vector<Op> ops;
  Axis axis{};
  Backend requested{};
  std::size_t limit = 0;
  mpi::collectively(ctx.comm, [&] {
    args.staging.parse();
    limit = args.staging.limit();
    ops = parse_ops(args.ops);
    if (ops.empty())
      TESSERA_THROW(InputError, "--op: no operation given (e.g. --op sum,norm2,max)");
    axis = parse_axis(args.axis);
    requested = parse_backend(args.backend);
  });
  PhaseTimers timers;
  const Backend backend = mpi::resolve_backend_for_host_data(requested, ctx.comm);
  ops::MatrixInput input = ops::MatrixInput::open_for_reduction(in, ctx.comm, args.keep_nan);
  const Shape shape = input.info.shape;
  const DType dtype = input.info.dtype;
  const ops::StagingChoice choice{limit, args.staging.stream()};
  Backend used = backend;
  ReduceResult r;
  if (ops::stream_out_of_core(choice, input, false, ctx.comm)) {
    input.close();
    ops::OutOfCoreOptions o;
    args.staging.apply(o);
    o.backend = backend;
    o.timers = &timers;
    o.missing = input.missing;
    ops::OutOfCoreReport report;
    r = ops::reduce_out_of_core(in, ops, axis, o, ctx.comm, &report);
    used = report.backend;
    log::info("reduced {} streamed: {} chunks of {} rows, {} of buffers per rank", in.str(),
              report.chunks, report.chunk_rows, format_bytes(double(report.buffer_bytes)));
  } else {
    ops::HostMatrix a = ops::read_matrix(input, ctx.comm, timers);
    r = ops::reduce_matrix(a, ops, axis, backend, ctx.comm, timers, &used, input.missing);
  }
  const double total = wall_seconds() - t0;

  if (args.json) {
    if (ctx.rank == 0) {
      std::string results;
      for (std::size_t k = 0; k < r.ops.size(); ++k)
        results += fmt::format("{}{}: {}", k ? ", " : "", json_string(op_name(r.ops[k])),
                               json_result(r.values[k], axis));
      std::string timings;
      // The out-of-core pipeline times its own "total"; the command's, printed last, covers
      // it and keeps the object's keys unique.
      for (const auto& [name, st] : timers.phases())
        if (name != "total")
          timings += fmt::format("{}: {}, ", json_string(name), json_number(st.seconds));
      std::printf("{\"file\": %s, \"dataset\": %s, \"shape\": [%lld, %lld], \"dtype\": %s, "
                  "\"axis\": %s, \"results\": {%s}, \"timings\": {%s\"total\": %s}, "
                  "\"ranks\": %d, \"threads\": %d, \"backend\": %s}\n",
                  json_string(in.file).c_str(), json_string(in.path).c_str(),
                  static_cast<long long>(shape.rows), static_cast<long long>(shape.cols),
                  json_string(dtype_name(dtype)).c_str(), json_string(axis_name(axis)).c_str(),
                  results.c_str(), timings.c_str(), json_number(total).c_str(), ctx.nranks,
                  omp_threads(), json_string(backend_name(used)).c_str());
      std::fflush(stdout);
    }
    // stdout holds exactly the JSON object; the table goes to stderr.
    print_timing_table(timers, ctx, stderr);
    return;
  }
  if (ctx.rank == 0) {
    std::printf("%s: %s %s, axis %s\n", in.str().c_str(), shape.str().c_str(),
                std::string(dtype_name(dtype)).c_str(), std::string(axis_name(axis)).c_str());
    for (std::size_t k = 0; k < r.ops.size(); ++k) {
      const auto& v = r.values[k];
      std::string line = fmt::format("  {:<8}", op_name(r.ops[k]));
      if (axis == Axis::All) {
        line += fmt::format(" {:.17g}", v.at(0));
      } else {
        const std::size_t show = std::min<std::size_t>(v.size(), 8);
        for (std::size_t i = 0; i < show; ++i)
          line += fmt::format(" {:.17g}", v[i]);
        if (show < v.size())
          line += fmt::format(" … ({} values; --json prints all)", v.size());
      }
      std::printf("%s\n", line.c_str());
    }
    std::fflush(stdout);
  }
  print_timing_table(timers, ctx);
  return;
}

} // namespace

} // namespace tessera::app
