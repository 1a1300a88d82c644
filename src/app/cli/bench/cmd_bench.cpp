// tessera bench transpose|reduce|exchange: throughput of the kernels and plans, beside the
// memcpy (or read) bandwidth of the same bytes measured in the same run. Rank 0 prints a table,
// or one JSON object with --json.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/bench/bench.hpp"
#include "cli/bench/bench_format.hpp"
#include "cli/commands.hpp"
#include "cli/commands/byte_size.hpp"
#include "core/dtype.hpp"
#include "core/permute_layout.hpp"
#include "core/throw.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"
#include "mpi/transpose_plan.hpp"

namespace tessera::app {

namespace {

struct Options {
  std::string kind = "transpose";
  std::string backend = "cpu";
  std::int64_t rows = 4096, cols = 4096;
  std::string dtype = "f64";
  int repeat = 10;
  int warmup = 2;
  std::string ops = "sum";
  std::string axis = "all";
  std::string algorithm = "auto";
  bool json = false;
  bool no_check = false;
  bool shared_input = false;
  std::string from = "rows", to = "cols";
  bool transpose = false;
  std::string memory; // "" = the backend's default
  std::string chunk;  // host-staged transpose: bytes per chunk ("" = the default)
  std::string shapes; // "16384x16384,17x1000003"
  std::string preset; // named matrix of shapes and types
  bool variants = false;
  std::string shape; // permute: "64x2048x2048"
  std::string axes;  // permute: "1,2,0"
};

// The named benchmark matrices: the shape classes a kernel must handle at full speed.
struct Preset {
  const char* name;
  const char* shapes;
  const char* transpose_dtypes;
  const char* reduce_dtypes;
  const char* axes;
};
constexpr Preset kPresets[] = {
    // powers of two, odd primes, tall-skinny and short-wide, mid-size (in the L2 cache)
    {"classes", "16384x16384,16411x16363,1000003x17,17x1000003,2048x2048,2053x2039",
     "f32,f64,c64,c128", "f32,f64", "all,rows,cols"},
    // small and quick: the same classes at a size that runs in seconds anywhere
    {"quick", "1024x1024,1031x1021,100003x17,17x100003,64x64", "f32,f64,c64,c128", "f32,f64",
     "all,rows,cols"},
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t a = 0;
  while (a <= s.size()) {
    const std::size_t b = std::min(s.find(',', a), s.size());
    if (b > a)
      out.push_back(s.substr(a, b - a));
    a = b + 1;
  }
  return out;
}

std::pair<std::int64_t, std::int64_t> parse_shape(const std::string& s) {
  const std::size_t x = s.find('x');
  std::int64_t r = 0, c = 0;
  bool ok = x != std::string::npos && x > 0 && x + 1 < s.size();
  if (ok) {
    try {
      std::size_t n1 = 0, n2 = 0;
      r = std::stoll(s.substr(0, x), &n1);
      c = std::stoll(s.substr(x + 1), &n2);
      ok = n1 == x && n2 == s.size() - x - 1 && r > 0 && c > 0;
    } catch (const std::exception&) {
      ok = false;
    }
  }
  TESSERA_REQUIRE(ok, InputError,
                  "bench: --shapes takes ROWSxCOLS entries with positive sizes, "
                  "got '{}'",
                  s);
  return {r, c};
}

// permute: --shape D0xD1x… (rank 1 to 8, positive lengths) and --axes i,j,… (a permutation).
std::vector<std::int64_t> parse_nd_shape(const std::string& s) {
  std::vector<std::int64_t> shape;
  std::size_t a = 0;
  bool ok = !s.empty();
  while (ok && a <= s.size()) {
    const std::size_t b = std::min(s.find('x', a), s.size());
    try {
      std::size_t used = 0;
      shape.push_back(std::stoll(s.substr(a, b - a), &used));
      ok = used == b - a && shape.back() > 0;
    } catch (const std::exception&) {
      ok = false;
    }
    a = b + 1;
  }
  TESSERA_REQUIRE(ok, InputError,
                  "bench permute: --shape takes positive lengths joined by x (64x2048x2048), got "
                  "'{}'",
                  s);
  return shape;
}

std::vector<int> parse_axes(const std::string& s) {
  std::vector<int> axes;
  for (const std::string& x : split_list(s)) {
    try {
      std::size_t used = 0;
      axes.push_back(std::stoi(x, &used));
      TESSERA_REQUIRE(used == x.size(), InputError, "bad axis");
    } catch (const std::exception&) {
      TESSERA_THROW(InputError,
                    "bench permute: --axes takes dimension indices separated by commas "
                    "(1,2,0), got '{}'",
                    s);
    }
  }
  return axes;
}

} // namespace

Command add_bench(CLI::App& app, const Context& ctx) {
  auto opt = std::make_shared<Options>();
  Command c;
  c.repeats_plans = true;
  c.sub = app.add_subcommand(
      "bench", "Measure transpose, reduction and exchange throughput (GB/s and fraction of "
               "memcpy bandwidth measured in the same run)");
  auto* sub = c.sub;
  sub->add_option("what", opt->kind,
                  "transpose (local kernel on 1 rank, distributed plan on more), reduce, "
                  "exchange (distributed transpose with its time split by phase), "
                  "redistribute (between the layouts --from and --to), or heat2d (a step of the "
                  "one-GPU tile path, --rows ny --cols nx, --backend cuda), or permute (the "
                  "permutation of dimensions of one array, --shape and --axes)")
      ->check(
          CLI::IsMember({"transpose", "reduce", "exchange", "redistribute", "heat2d", "permute"}))
      ->required();
  sub->add_option("--backend", opt->backend, "cpu, cuda or auto")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  sub->add_option("--rows", opt->rows, "Rows M of the global matrix")->capture_default_str();
  sub->add_option("--cols", opt->cols, "Columns N of the global matrix")->capture_default_str();
  sub->add_option("--dtype", opt->dtype,
                  "f32, f64, c64 or c128 (reduce: f32 or f64; permute: i8 … u64 too); a "
                  "comma-separated list runs each")
      ->capture_default_str();
  sub->add_option("--repeat", opt->repeat, "Timed repeats (the median is reported)")
      ->capture_default_str();
  sub->add_option("--warmup", opt->warmup, "Untimed runs first")->capture_default_str();
  sub->add_option("--op", opt->ops, "Reductions, comma-separated (reduce)")->capture_default_str();
  sub->add_option("--axis", opt->axis,
                  "all, rows or cols (reduce); a comma-separated list runs each")
      ->capture_default_str();
  sub->add_option("--algorithm", opt->algorithm,
                  "Exchange algorithm: auto, alltoallv, pairwise, pipelined, shared or nccl "
                  "(GPU to GPU, --backend cuda)")
      ->capture_default_str();
  sub->add_option("--memory", opt->memory,
                  "Where the data lives with --backend cuda: device (default) or host (pinned, "
                  "staged through the GPU)")
      ->check(CLI::IsMember({"host", "device"}));
  sub->add_option("--chunk-size", opt->chunk,
                  "Input bytes per chunk of the host-staged transpose (--memory host; default "
                  "256MiB)");
  sub->add_option("--shapes", opt->shapes,
                  "Benchmark matrix: comma-separated ROWSxCOLS shapes, each run with every "
                  "--dtype (and --axis) of the comma-separated lists; one table row or JSON line "
                  "per run");
  sub->add_option("--preset", opt->preset,
                  "A named benchmark matrix: classes (powers of two, odd primes, tall-skinny, "
                  "short-wide, mid-size) or quick; --shapes, --dtype and --axis override its parts")
      ->check(CLI::IsMember({"classes", "quick"}));
  sub->add_flag("--variants", opt->variants,
                "With --backend cuda, transpose: also time every compiled kernel variant; "
                "heat2d: also the comparison tile kernels");
  sub->add_option("--from", opt->from,
                  "redistribute: the layout of A: rows, cols, 2d:PRxPC or bc:MBxNB:PRxPC "
                  "(block-cyclic, as ScaLAPACK's)")
      ->capture_default_str();
  sub->add_option("--to", opt->to, "redistribute: the layout of B (as --from)")
      ->capture_default_str();
  sub->add_flag("--transpose", opt->transpose, "redistribute: B = A transposed");
  sub->add_option("--shape", opt->shape,
                  "permute: the input's shape, lengths joined by x (64x2048x2048; rank 1 to 8)");
  sub->add_option("--axes", opt->axes,
                  "permute: the output's order of the input's dimensions by index (1,2,0)");
  sub->add_flag("--json", opt->json,
                "Print one JSON object (one line per run) instead of the "
                "table");
  sub->add_flag("--no-check", opt->no_check, "Skip verifying the result after timing");
  sub->add_flag("--shared-input", opt->shared_input,
                "Distributed transpose: keep the input in the plan's node-shared buffer, so "
                "that ranks of one node read each other's blocks directly");

  auto* dtype_opt = sub->get_option("--dtype");
  auto* axis_opt = sub->get_option("--axis");
  c.run = [opt, &ctx, dtype_opt, axis_opt]() -> int {
    BenchArgs a;
    std::vector<std::pair<std::int64_t, std::int64_t>> shape_list;
    std::vector<DType> dtype_list;
    std::vector<Axis> axis_list;
    // Every rank validates the same arguments; they fail together, with one message.
    mpi::collectively(ctx.comm, [&] {
      a.kind = opt->kind == "reduce"         ? BenchKind::Reduce
               : opt->kind == "exchange"     ? BenchKind::Exchange
               : opt->kind == "redistribute" ? BenchKind::Redistribute
               : opt->kind == "heat2d"       ? BenchKind::Heat2d
               : opt->kind == "permute"      ? BenchKind::Permute
                                             : BenchKind::Transpose;
      TESSERA_REQUIRE(opt->rows > 0 && opt->cols > 0, InputError,
                      "bench: --rows and --cols must be positive, got {} x {}", opt->rows,
                      opt->cols);
      TESSERA_REQUIRE(opt->repeat > 0 && opt->warmup >= 0, InputError,
                      "bench: --repeat must be positive and --warmup non-negative, got {} and {}",
                      opt->repeat, opt->warmup);
      // The matrix: shapes × dtypes (× axes for reductions).
      const Preset* preset = nullptr;
      for (const Preset& p : kPresets)
        if (opt->preset == p.name)
          preset = &p;
      std::string shapes = opt->shapes, dtypes = opt->dtype, axes = opt->axis;
      if (preset != nullptr) {
        if (shapes.empty())
          shapes = preset->shapes;
        if (dtype_opt->count() == 0)
          dtypes = a.kind == BenchKind::Reduce ? preset->reduce_dtypes : preset->transpose_dtypes;
        if (axis_opt->count() == 0)
          axes = preset->axes;
      }
      if (a.kind == BenchKind::Permute) {
        // One array: rows × cols is its shape flattened before the innermost dimension.
        TESSERA_REQUIRE(!opt->shape.empty() && !opt->axes.empty() && shapes.empty(), InputError,
                        "bench permute takes --shape and --axes (not --shapes or --preset)");
        a.shape = parse_nd_shape(opt->shape);
        a.axes = parse_axes(opt->axes);
        check_permutation(a.shape, a.axes);
        std::int64_t outer = 1;
        for (std::size_t k = 0; k + 1 < a.shape.size(); ++k)
          outer *= a.shape[k];
        shape_list.emplace_back(outer, a.shape.back());
      } else {
        TESSERA_REQUIRE(opt->shape.empty() && opt->axes.empty(), InputError,
                        "bench: --shape and --axes apply to bench permute");
      }
      for (const auto& sh : split_list(shapes))
        shape_list.push_back(parse_shape(sh));
      if (shape_list.empty())
        shape_list.emplace_back(opt->rows, opt->cols);
      for (const auto& d : split_list(dtypes)) {
        // A permutation moves any element type; the other operations take the matrix types.
        dtype_list.push_back(a.kind == BenchKind::Permute ? parse_dtype(d) : parse_matrix_dtype(d));
        if (a.kind == BenchKind::Reduce)
          TESSERA_REQUIRE(dtype_is_real(dtype_list.back()), InputError,
                          "bench reduce: --dtype must be f32 or f64, got {}", d);
      }
      TESSERA_REQUIRE(!dtype_list.empty(), InputError, "bench: --dtype names no type");
      for (const auto& x : split_list(axes))
        axis_list.push_back(parse_axis(x));
      TESSERA_REQUIRE(!axis_list.empty(), InputError, "bench: --axis names no axis");
      if (a.kind != BenchKind::Reduce)
        axis_list.resize(1);
      a.repeat = opt->repeat;
      a.warmup = opt->warmup;
      a.ops = parse_ops(opt->ops);
      a.algorithm = opt->algorithm;
      parse_exchange(a.algorithm); // reject a bad name before any work
      a.check = !opt->no_check;
      a.shared_input = opt->shared_input;
      a.from = opt->from;
      a.to = opt->to;
      a.transpose = opt->transpose;
      a.variants = opt->variants;
      if (!opt->chunk.empty())
        a.chunk_bytes = parse_byte_size(opt->chunk, "bench --chunk-size");
      a.comm = ctx.comm;
    });
    a.backend = mpi::resolve_backend(parse_backend(opt->backend), ctx.comm);
    mpi::collectively(ctx.comm, [&] {
      if (a.backend == Backend::Cuda)
        a.memory = opt->memory == "host" ? Memory::Host : Memory::Device;
      else
        TESSERA_REQUIRE(opt->memory != "device", InputError,
                        "bench: --memory device needs the CUDA backend (--backend cuda)");
      TESSERA_REQUIRE(opt->chunk.empty() ||
                          (a.backend == Backend::Cuda && a.memory == Memory::Host &&
                           a.kind == BenchKind::Transpose && a.chunk_bytes > 0),
                      InputError,
                      "bench: --chunk-size takes a positive size and applies to the host-staged "
                      "transpose only (bench transpose --backend cuda --memory host)");
    });
    const bool matrix = shape_list.size() * dtype_list.size() * axis_list.size() > 1;
    std::vector<BenchReport> reports;
    bool mismatch = false;
    for (const auto& [rows, cols] : shape_list)
      for (const DType t : dtype_list)
        for (const Axis axis : axis_list) {
          a.rows = rows;
          a.cols = cols;
          a.dtype = t;
          a.axis = axis;
          BenchReport r = a.backend == Backend::Cuda ? run_cuda_bench(a) : run_cpu_bench(a);
          if (r.memory.empty())
            r.memory = a.memory == Memory::Device ? "device" : "host";
          mismatch = mismatch || r.checked.rfind("MISMATCH", 0) == 0;
          if (ctx.rank == 0 && (opt->json || !matrix)) {
            // Printed as soon as measured: a long matrix shows progress.
            const std::string text = opt->json ? to_json(r) + "\n" : to_table(r);
            std::fputs(text.c_str(), stdout);
            std::fflush(stdout);
          }
          reports.push_back(std::move(r));
        }
    if (ctx.rank == 0 && matrix && !opt->json) {
      const std::string text = to_matrix_table(reports, a.kind == BenchKind::Reduce);
      std::fputs(text.c_str(), stdout);
      std::fflush(stdout);
    }
    return mismatch ? 1 : 0;
  };
  return c;
}

} // namespace tessera::app
