#include "core/settings.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "core/log.hpp"

namespace tessera::settings {

namespace {

struct Declaration {
  Setting setting;
  const char* variable;
  std::vector<std::string_view> choices; // empty: a number, a path or a kernel list
  double min = 0.0;                      // numbers: values must be >= min (> 0 when positive)
  bool positive = false;
  bool test_hook = false;
};

const std::vector<Declaration>& declarations() {
  static const std::vector<Declaration> table = {
      {Setting::Tuning, "TESSERA_TUNING", {"measure", "estimate"}},
      {Setting::Wisdom, "TESSERA_WISDOM", {}},
      {Setting::CpuIsa, "TESSERA_CPU_ISA", {"portable", "avx2", "avx512"}},
      {Setting::Hdf5Io, "TESSERA_HDF5_IO", {"auto", "parallel", "serial"}},
      {Setting::CollectiveTimeout, "TESSERA_COLLECTIVE_TIMEOUT", {}, 0.0, true},
      {Setting::HugePages, "TESSERA_HUGE_PAGES", {"0", "1"}},
      {Setting::Kernel, "TESSERA_KERNEL", {}},
      {Setting::TestHooks, "TESSERA_TEST_HOOKS", {"0", "1"}},
      {Setting::Fault, "TESSERA_FAULT", {}, 0.0, false, true},
      {Setting::IoDelayMs, "TESSERA_IO_DELAY_MS", {}, 0.0, false, true},
      {Setting::ComputeDelayMs, "TESSERA_COMPUTE_DELAY_MS", {}, 0.0, false, true},
  };
  return table;
}

const Declaration& declaration(Setting s) {
  for (const Declaration& d : declarations())
    if (d.setting == s)
      return d;
  std::abort(); // every Setting has a row above
}

bool is_number(Setting s) {
  return s == Setting::CollectiveTimeout || s == Setting::IoDelayMs || s == Setting::ComputeDelayMs;
}

std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names)
    out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

const char* value_of(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

bool hooks_enabled() {
  const char* v = value_of("TESSERA_TEST_HOOKS");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// One warning per variable and process: a setting read on every plan says it once.
void warn_once(const char* name, const std::string& problem) {
  static std::mutex lock;
  static std::set<std::string> said;
  const std::lock_guard<std::mutex> hold(lock);
  if (said.insert(name).second)
    log::warn("{}: ignored", problem);
}

std::optional<double> parse_number(const Declaration& d, const char* v) {
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (end == v || *end != '\0' || x < d.min || (d.positive && x <= 0.0))
    return std::nullopt;
  return x;
}

std::string number_problem(const Declaration& d, const char* v) {
  return std::string(d.variable) + "='" + v + "' is not a number " + (d.positive ? "> 0" : ">= 0");
}

std::string choice_problem(const Declaration& d, const char* v) {
  return std::string(d.variable) + "='" + v + "' is not one of " + join(d.choices);
}

// TESSERA_KERNEL parsed: one (op, kernel position) per entry, or the first problem.
struct KernelPicks {
  std::vector<std::pair<KernelOp, int>> picks;
  std::string problem;
};

KernelPicks parse_kernels(const std::string_view whole) {
  KernelPicks out;
  std::string_view text = whole;
  const auto fail = [&](const std::string& why) {
    out.problem = "TESSERA_KERNEL='" + std::string(whole) + "': " + why;
    return out;
  };
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view entry = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const std::size_t colon = entry.find(':');
    if (colon == std::string_view::npos)
      return fail("'" + std::string(entry) + "' is not op:kernel");
    const std::string_view op = entry.substr(0, colon), name = entry.substr(colon + 1);
    const KernelTable* table = nullptr;
    std::vector<std::string_view> ops;
    for (const KernelTable& t : kernel_tables()) {
      ops.push_back(t.name);
      if (t.name == op)
        table = &t;
    }
    if (table == nullptr)
      return fail("no operation '" + std::string(op) + "' (operations: " + join(ops) + ")");
    int k = 0;
    while (k < static_cast<int>(table->kernels.size()) && table->kernels[k] != name)
      ++k;
    if (k == static_cast<int>(table->kernels.size()))
      return fail("'" + std::string(op) + "' has no kernel '" + std::string(name) +
                  "' (kernels: " + join(table->kernels) + ")");
    out.picks.emplace_back(table->op, k);
  }
  return out;
}

} // namespace

const char* variable(Setting s) noexcept {
  return declaration(s).variable;
}

bool present(Setting s) {
  const Declaration& d = declaration(s);
  return (!d.test_hook || hooks_enabled()) && std::getenv(d.variable) != nullptr;
}

std::optional<std::string> raw(Setting s) {
  const Declaration& d = declaration(s);
  if (d.test_hook && !hooks_enabled())
    return std::nullopt;
  const char* v = value_of(d.variable);
  return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
}

int choice(Setting s, int fallback) {
  const Declaration& d = declaration(s);
  const std::optional<std::string> v = raw(s);
  if (!v)
    return fallback;
  for (std::size_t k = 0; k < d.choices.size(); ++k)
    if (d.choices[k] == *v)
      return static_cast<int>(k);
  warn_once(d.variable, choice_problem(d, v->c_str()));
  return fallback;
}

double number(Setting s, double fallback) {
  const Declaration& d = declaration(s);
  const std::optional<std::string> v = raw(s);
  if (!v)
    return fallback;
  if (const std::optional<double> x = parse_number(d, v->c_str()))
    return *x;
  warn_once(d.variable, number_problem(d, v->c_str()));
  return fallback;
}

const std::vector<KernelTable>& kernel_tables() {
  static const std::vector<KernelTable> tables = {
      // Each table's kernels in the order of its enum: cuda/reduce_launch.cuh (RowsKernel),
      // cuda/heat2d_tiles.cu (one kernel), cuda/heat2d_tiles.hpp (ReducedSolve).
      {KernelOp::CudaReduceRows,
       "cuda-reduce-rows",
       {"warp", "staged", "short", "strided", "tree", "narrow"}},
      {KernelOp::Heat2dTiles, "heat2d-tiles", {"shared"}},
      {KernelOp::Heat2dReduced, "heat2d-reduced", {"warp", "thread"}},
  };
  return tables;
}

std::optional<int> kernel(KernelOp op) {
  const std::optional<std::string> v = raw(Setting::Kernel);
  if (!v)
    return std::nullopt;
  const KernelPicks parsed = parse_kernels(*v);
  if (!parsed.problem.empty()) {
    warn_once("TESSERA_KERNEL", parsed.problem);
    return std::nullopt;
  }
  std::optional<int> pick; // the last entry for the operation wins
  for (const auto& [o, k] : parsed.picks)
    if (o == op)
      pick = k;
  return pick;
}

std::vector<std::string> environment_problems() {
  std::vector<std::string> problems;
  const bool hooks = hooks_enabled();
  for (const Declaration& d : declarations()) {
    const char* v = value_of(d.variable);
    if (v == nullptr || (d.test_hook && !hooks) || d.setting == Setting::Fault)
      continue; // an injected fault is checked where it is parsed, with the job's ranks
    if (!d.choices.empty()) {
      bool known = false;
      for (std::string_view c : d.choices)
        known = known || c == v;
      if (!known)
        problems.push_back(choice_problem(d, v));
    } else if (is_number(d.setting) && !parse_number(d, v)) {
      problems.push_back(number_problem(d, v));
    } else if (d.setting == Setting::Kernel) {
      if (KernelPicks p = parse_kernels(v); !p.problem.empty())
        problems.push_back(p.problem);
    }
  }
  static const std::pair<const char*, const char*> retired[] = {
      {"TESSERA_CUDA_ROWS_KERNEL", "cuda-reduce-rows"},
      {"TESSERA_HEAT2D_TILE_KERNEL", "heat2d-tiles"},
      {"TESSERA_HEAT2D_REDUCED", "heat2d-reduced"}};
  for (const auto& [name, op] : retired)
    if (value_of(name) != nullptr)
      problems.push_back(std::string(name) + " no longer acts: set TESSERA_KERNEL=" + op +
                         ":NAME instead");
  return problems;
}

} // namespace tessera::settings
