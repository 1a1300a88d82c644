// tessera bench transpose|reduce|exchange: throughput of the kernels and plans, beside the
// memcpy (or read) bandwidth of the same bytes measured in the same run. Rank 0 prints a table,
// or one JSON object with --json.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/bench.hpp"
#include "app/commands.hpp"
#include "core/throw.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"
#include "mpi/transpose_plan.hpp"

namespace tessera::app {

BenchTiming summarize(std::vector<double> seconds) {
  BenchTiming t;
  if (seconds.empty())
    return t;
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  t.median = n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
  t.min = seconds.front();
  t.max = seconds.back();
  return t;
}

namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    else
      out += c;
  }
  return out + '"';
}

// Finite numbers only (JSON has no inf/nan).
std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "null";
}

std::string to_json(const BenchReport& r) {
  std::string phases;
  for (const auto& p : r.phases)
    phases +=
        fmt::format("{}{{\"name\":{},\"seconds\":{},\"bytes\":{}}}", phases.empty() ? "" : ",",
                    json_string(p.name), json_number(p.seconds), json_number(p.bytes));
  std::string notes;
  for (const auto& n : r.notes)
    if (!n.empty()) {
      if (!notes.empty())
        notes += ',';
      notes += json_string(n);
    }
  std::string extras;
  if (!r.algorithm.empty())
    extras += fmt::format(",\"algorithm\":{}", json_string(r.algorithm));
  if (!r.kernel.empty())
    extras += fmt::format(",\"kernel\":{}", json_string(r.kernel));
  for (const auto& [name, value] : r.extras)
    extras += fmt::format(",{}:{}", json_string(name), json_number(value));
  return fmt::format(
      "{{\"benchmark\":{},\"backend\":{},\"device\":{},\"rows\":{},\"cols\":{},\"dtype\":{},"
      "\"ranks\":{},\"threads\":{},\"repeat\":{},\"warmup\":{},"
      "\"seconds\":{{\"median\":{},\"min\":{},\"max\":{}}},"
      "\"bytes_per_rank\":{},\"bytes_total\":{},\"gbps\":{},\"gbps_per_rank\":{},"
      "\"reference\":{{\"name\":{},\"gbps\":{}}},\"fraction\":{},\"checked\":{},"
      "\"phases\":[{}],\"notes\":[{}],\"memory\":{}{}}}",
      json_string(r.what), json_string(r.backend), json_string(r.device), r.rows, r.cols,
      json_string(dtype_name(r.dtype)), r.ranks, r.threads, r.repeat, r.warmup,
      json_number(r.time.median), json_number(r.time.min), json_number(r.time.max),
      json_number(r.bytes_per_rank), json_number(r.bytes_total), json_number(r.gbps),
      json_number(r.gbps_per_rank), json_string(r.reference), json_number(r.reference_gbps),
      json_number(r.fraction), json_string(r.checked), phases, notes, json_string(r.memory),
      extras);
}

std::string reference_label(const std::string& reference) {
  if (reference == "read")
    return "read bandwidth";
  if (reference == "memcpy")
    return "memcpy bandwidth";
  if (reference == "copy")
    return "D2D copy";
  if (reference == "cub")
    return "cub Sum";
  return reference;
}

std::string to_table(const BenchReport& r) {
  std::string s = fmt::format("tessera bench: {}\n", r.what);
  s += fmt::format("  {} x {} {}, {} rank{}, backend {} ({})\n", r.rows, r.cols,
                   dtype_name(r.dtype), r.ranks, r.ranks == 1 ? "" : "s", r.backend, r.device);
  s += fmt::format("  {} timed repeats after {} warm-up; result checked: {}\n", r.repeat, r.warmup,
                   r.checked);
  if (!r.memory.empty() || !r.algorithm.empty())
    s += fmt::format("  data in {} memory{}\n", r.memory.empty() ? "host" : r.memory,
                     r.algorithm.empty() ? "" : ", exchange algorithm " + r.algorithm);
  s += fmt::format("  time per execute   median {:.4f} s   min {:.4f} s   max {:.4f} s\n",
                   r.time.median, r.time.min, r.time.max);
  const bool reads_only = r.reference == "read" || r.reference == "cub";
  s += fmt::format(
      "  bytes {} per execute   {:.3f} GB total{}\n", reads_only ? "read" : "read + written",
      r.bytes_total * 1e-9,
      r.ranks > 1 ? fmt::format(", {:.3f} GB on the largest rank", r.bytes_per_rank * 1e-9) : "");
  s += fmt::format("  throughput         {:.2f} GB/s", r.gbps);
  if (r.ranks > 1)
    s += fmt::format("   ({:.2f} GB/s per rank)", r.gbps_per_rank);
  const std::string ref_name = reference_label(r.reference);
  s += fmt::format("\n  {:<18} {:.2f} GB/s (same bytes, this run)\n", ref_name, r.reference_gbps);
  s += fmt::format("  fraction           {:.0f}% of {}\n", 100.0 * r.fraction, ref_name);
  if (!r.phases.empty()) {
    s += fmt::format("  {:<24} {:>12} {:>8} {:>9}\n", "phase (max over ranks)", "s/execute",
                     "share", "GB/s");
    for (const auto& p : r.phases) {
      const double share = r.time.median > 0 ? p.seconds / r.time.median : 0.0;
      s += fmt::format("  {:<24} {:>12.5f} {:>7.0f}% {:>9}\n", p.name, p.seconds, 100.0 * share,
                       p.bytes > 0 && p.seconds > 0
                           ? fmt::format("{:.2f}", p.bytes / p.seconds * 1e-9)
                           : std::string("-"));
    }
  }
  for (const auto& n : r.notes)
    if (!n.empty())
      s += fmt::format("  note: {}\n", n);
  return s;
}

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
  std::string memory; // "" = the backend's default
  std::string shapes; // "16384x16384,17x1000003"
  std::string preset; // named matrix of shapes and types
  bool variants = false;
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

std::string fraction_of(const BenchReport& r, const std::string& name) {
  for (const auto& [k, v] : r.extras)
    if (k == name)
      return fmt::format("{:.2f}", v);
  return "-";
}

// One line per report: the benchmark matrix.
std::string to_matrix_table(const std::vector<BenchReport>& reports, bool reduce) {
  std::string s;
  if (reports.empty())
    return s;
  s += fmt::format("tessera bench: {} on {}\n", reduce ? "reduce" : "transpose",
                   reports.front().device);
  const std::string ref = reports.front().reference;
  if (reduce)
    s += fmt::format("{:>18} {:>5} {:>5} {:>22} {:>10} {:>10} {:>7}  {}\n", "shape", "dtype",
                     "axis", "ops", "GB/s", "ref GB/s", "of ref", "checked");
  else
    s += fmt::format("{:>18} {:>5} {:>16} {:>10} {:>10} {:>8} {:>6} {:>6}  {}\n", "shape", "dtype",
                     "kernel", "GB/s", "ref GB/s", "tessera", "geam", "tile", "checked");
  for (const auto& r : reports) {
    const std::string shape = fmt::format("{}x{}", r.rows, r.cols);
    if (reduce) {
      const std::size_t p = r.what.find(" over ");
      const std::string ops = r.what.substr(7, p == std::string::npos ? 0 : p - 7);
      const std::string axis =
          p == std::string::npos ? "" : r.what.substr(p + 6, r.what.find(' ', p + 6) - p - 6);
      s += fmt::format("{:>18} {:>5} {:>5} {:>22} {:>10.1f} {:>10.1f} {:>7.3f}  {}\n", shape,
                       dtype_name(r.dtype), axis, ops, r.gbps, r.reference_gbps, r.fraction,
                       r.checked.substr(0, 3));
    } else {
      s += fmt::format("{:>18} {:>5} {:>16} {:>10.1f} {:>10.1f} {:>8.3f} {:>6} {:>6}  {}\n", shape,
                       dtype_name(r.dtype), r.kernel.empty() ? "-" : r.kernel, r.gbps,
                       r.reference_gbps, r.fraction, fraction_of(r, "geam_fraction"),
                       fraction_of(r, "tile_fraction"), r.checked.substr(0, 3));
    }
  }
  s += reduce
           ? fmt::format("(GB/s read; ref: {} of the same bytes, this run)\n", reference_label(ref))
           : fmt::format("(GB/s read + written; ref: {} of the same bytes, this run; "
                         "tessera, geam, tile: fractions of it)\n",
                         reference_label(ref));
  return s;
}

} // namespace

Command add_bench(CLI::App& app, const Context& ctx) {
  auto opt = std::make_shared<Options>();
  Command c;
  c.sub = app.add_subcommand(
      "bench", "Measure transpose, reduction and exchange throughput (GB/s and fraction of "
               "memcpy bandwidth measured in the same run)");
  auto* sub = c.sub;
  sub->add_option("what", opt->kind,
                  "transpose (local kernel on 1 rank, distributed plan on more), reduce, or "
                  "exchange (distributed transpose with its time split by phase)")
      ->check(CLI::IsMember({"transpose", "reduce", "exchange"}))
      ->required();
  sub->add_option("--backend", opt->backend, "cpu, cuda or auto")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  sub->add_option("--rows", opt->rows, "Rows M of the global matrix")->capture_default_str();
  sub->add_option("--cols", opt->cols, "Columns N of the global matrix")->capture_default_str();
  sub->add_option("--dtype", opt->dtype,
                  "f32, f64, c64 or c128 (reduce: f32 or f64); a comma-separated list runs each")
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
  sub->add_option("--shapes", opt->shapes,
                  "Benchmark matrix: comma-separated ROWSxCOLS shapes, each run with every "
                  "--dtype (and --axis) of the comma-separated lists; one table row or JSON line "
                  "per run");
  sub->add_option("--preset", opt->preset,
                  "A named benchmark matrix: classes (powers of two, odd primes, tall-skinny, "
                  "short-wide, mid-size) or quick; --shapes, --dtype and --axis override its parts")
      ->check(CLI::IsMember({"classes", "quick"}));
  sub->add_flag("--variants", opt->variants,
                "With --backend cuda, transpose: also time every compiled kernel variant");
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
      a.kind = opt->kind == "reduce"     ? BenchKind::Reduce
               : opt->kind == "exchange" ? BenchKind::Exchange
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
      for (const auto& sh : split_list(shapes))
        shape_list.push_back(parse_shape(sh));
      if (shape_list.empty())
        shape_list.emplace_back(opt->rows, opt->cols);
      for (const auto& d : split_list(dtypes)) {
        dtype_list.push_back(parse_dtype(d));
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
      a.variants = opt->variants;
      a.comm = ctx.comm;
    });
    a.backend = mpi::resolve_backend(parse_backend(opt->backend), ctx.comm);
    mpi::collectively(ctx.comm, [&] {
      if (a.backend == Backend::Cuda)
        a.memory = opt->memory == "host" ? Memory::Host : Memory::Device;
      else
        TESSERA_REQUIRE(opt->memory != "device", InputError,
                        "bench: --memory device needs the CUDA backend (--backend cuda)");
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
