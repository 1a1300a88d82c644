// tessera reduce IN.h5:/A[,/B…] [IN2.h5:/C…] --op sum,norm2,max [--axis all|rows|cols]
// [--backend …] [--json] [--keep-nan] [--memory-limit SIZE]: in memory when this rank's rows fit
// the limit (or none is given), out of core otherwise (ops/out_of_core.hpp), with the same
// values bit for bit. Missing values (_FillValue, missing_value, NaN) are skipped and packed
// data decoded (io/missing_values.hpp, mpi/reduce_masked.hpp). Several datasets are reduced
// one after the other, each printed as it is done (--json: one object per line).
// With --dims NAMES --output OUT.h5 an N-D dataset is reduced over those dimensions into one
// variable per op over the others (ops/reduce_dims.hpp).
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

std::string json_result(const std::vector<double>& v, Axis axis) {
  if (axis == Axis::All)
    return json_number(v.at(0));
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? "," : "") + json_number(v[i]);
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
  StagingArgs staging;
};

void reduce_one(const Context& ctx, ReduceArgs& args, const io::DatasetRef& in);
void reduce_over_dims(const Context& ctx, ReduceArgs& args, const io::DatasetRef& in);

} // namespace

Command add_reduce(CLI::App& app, const Context& ctx) {
  auto args = std::make_shared<ReduceArgs>();
  Command c;
  c.sub = app.add_subcommand("reduce", "Reductions of a dataset (f32 or f64)");
  c.sub
      ->add_option(
          "inputs", args->ins,
          "Input datasets FILE.h5:/path (2-D, or rank 2 to 8 with --dims; FILE.h5:/a,/b for "
          "several of a file)")
      ->required();
  CLI::Option* op_option =
      c.sub
          ->add_option("--op", args->ops,
                       "Comma-separated: sum, min, max, mean, norm1, norm2, norminf, count "
                       "(with --dims: sum, mean, min, max, count; default sum,mean,min,max)")
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
                    "writing one variable per op over the others to --output (sum, mean, min, "
                    "max, count)");
  c.sub->add_option("--output", args->output,
                    "The file --dims writes: IN_PATH_op for each op (e.g. /temp_mean)");
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
        TESSERA_REQUIRE(!args->output.empty(), InputError,
                        "--dims writes one variable per op: name the file with --output OUT.h5");
        TESSERA_REQUIRE(refs.size() == 1, InputError, "--dims reduces one dataset per call, not {}",
                        refs.size());
      }
    });
    if (!args->dims.empty()) {
      reduce_over_dims(ctx, *args, refs.front());
      return 0;
    }
    for (const io::DatasetRef& in : refs)
      reduce_one(ctx, *args, in);
    return 0;
  };
  return c;
}

namespace {

// One N-D dataset over --dims, written to --output. Collective.
void reduce_over_dims(const Context& ctx, ReduceArgs& args, const io::DatasetRef& in) {
  ops::ReduceDimsOptions o;
  mpi::collectively(ctx.comm, [&] {
    args.staging.parse();
    o.memory_limit = args.staging.limit();
    o.ops = parse_ops(args.ops);
    TESSERA_REQUIRE(!io::same_file(in.file, args.output), InputError,
                    "the output file {} is also the input file; write to another file",
                    args.output);
  });
  PhaseTimers timers;
  ops::ArrayInput array = ops::ArrayInput::open(in, ctx.comm);
  mpi::collectively(ctx.comm,
                    [&] { o.reduced = ops::resolve_dims(args.dims, array.dim_names, in.str()); });
  o.missing = io::read_missing_values(*array.file, in.path, !args.keep_nan);
  o.output = args.output;
  const io::Provenance provenance = make_provenance(ctx, "", Backend::Cpu);
  o.provenance = &provenance;
  o.timers = &timers;
  const ops::ReduceDimsReport r = ops::reduce_dims(array, o, ctx.comm);
  log::info("wrote {} in {}: {} over {} of {} ({:.3f} s)", fmt::join(r.outputs, ", "), o.output,
            fmt::join(r.shape, "x"), args.dims, in.str(), r.seconds);
  print_timing_table(timers, ctx);
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
