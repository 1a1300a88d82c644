// The text table and the JSON object of `tessera bench` reports (see bench_format.hpp).
#include "cli/bench/bench_format.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <string>
#include <string_view>

namespace tessera::app {

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

std::string fraction_of(const BenchReport& r, const std::string& name) {
  for (const auto& [k, v] : r.extras)
    if (k == name)
      return fmt::format("{:.2f}", v);
  return "-";
}

} // namespace

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
  if (!r.shape.empty())
    extras += fmt::format(",\"shape\":[{}],\"axes\":[{}]", fmt::join(r.shape, ","),
                          fmt::join(r.axes, ","));
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

std::string to_table(const BenchReport& r) {
  std::string s = fmt::format("tessera bench: {}\n", r.what);
  const std::string extent = r.shape.empty() ? fmt::format("{} x {}", r.rows, r.cols)
                                             : fmt::format("{} by axes {}", fmt::join(r.shape, "x"),
                                                           fmt::join(r.axes, ","));
  s += fmt::format("  {} {}, {} rank{}, backend {} ({})\n", extent, dtype_name(r.dtype), r.ranks,
                   r.ranks == 1 ? "" : "s", r.backend, r.device);
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

} // namespace tessera::app
