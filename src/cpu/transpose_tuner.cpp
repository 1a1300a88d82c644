#include "cpu/transpose_tuner.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "core/log.hpp"
#include "core/settings.hpp"
#include "cpu/wisdom.hpp"

namespace tessera::cpu {

namespace {

Tuning tuning_from_environment() {
  return settings::choice(settings::Setting::Tuning, 0) == 1 ? Tuning::Estimate : Tuning::Measure;
}

// The process's choices; one lock, taken only outside the timed kernels.
struct Choices {
  std::mutex lock;
  bool configured = false;
  Tuning mode = Tuning::Measure;
  bool mode_chosen = false;   // by TESSERA_TUNING or set_tuning()
  bool wisdom_chosen = false; // by TESSERA_WISDOM or set_wisdom_file()
  std::unique_ptr<detail::WisdomFile> wisdom;
  bool wisdom_loaded = false;
  std::map<detail::TransposeKey, detail::KernelParams> chosen;
  std::size_t trials = 0;

  void configure() { // with the lock held
    if (configured)
      return;
    configured = true;
    mode = tuning_from_environment();
    mode_chosen = settings::raw(settings::Setting::Tuning).has_value();
    wisdom_chosen = settings::present(settings::Setting::Wisdom); // set empty: no file
    if (const auto w = settings::raw(settings::Setting::Wisdom))
      wisdom = std::make_unique<detail::WisdomFile>(*w);
  }
  void load_wisdom() { // with the lock held
    if (wisdom_loaded || !wisdom)
      return;
    wisdom_loaded = true;
    for (const auto& [key, name] : wisdom->load())
      if (auto k = detail::parse_kernel_name(name))
        chosen.emplace(key, *k);
  }
};

Choices& choices() {
  static Choices c;
  return c;
}

} // namespace

void set_tuning(Tuning t) {
  auto& c = choices();
  std::lock_guard g(c.lock);
  c.configure();
  c.mode = t;
  c.mode_chosen = true;
}

void set_default_tuning(Tuning t) {
  auto& c = choices();
  std::lock_guard g(c.lock);
  c.configure();
  if (!c.mode_chosen)
    c.mode = t;
}

void use_wisdom_cache() {
  {
    auto& c = choices();
    std::lock_guard g(c.lock);
    c.configure();
    if (c.wisdom_chosen)
      return;
  }
  detail::use_wisdom_cache_at(detail::default_wisdom_cache());
}

namespace detail {
void use_wisdom_cache_at(const std::string& path) {
  auto& c = choices();
  std::lock_guard g(c.lock);
  c.configure();
  c.wisdom = path.empty() ? nullptr : std::make_unique<WisdomFile>(path, WisdomFile::Kind::Cache);
  c.wisdom_loaded = false;
}
} // namespace detail

Tuning tuning() {
  auto& c = choices();
  std::lock_guard g(c.lock);
  c.configure();
  return c.mode;
}

void set_wisdom_file(const std::string& path) {
  auto& c = choices();
  std::lock_guard g(c.lock);
  c.configure();
  c.wisdom = path.empty() ? nullptr : std::make_unique<detail::WisdomFile>(path);
  c.wisdom_loaded = false;
  c.wisdom_chosen = true;
}

std::size_t last_level_cache_bytes() {
  long llc = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0)
    llc = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
  return llc > 0 ? static_cast<std::size_t>(llc) : 0;
}

std::string wisdom_file() {
  auto& c = choices();
  std::lock_guard g(c.lock);
  c.configure();
  return c.wisdom ? c.wisdom->path() : std::string();
}

namespace detail {

namespace {

// The part of the transpose a trial times: all of it when small, else a corner with the same
// leading dimensions (the same cache-set and aliasing behaviour) of at least 32 MiB of input
// and twice the last-level cache, so that the trial sees memory, not cache (non-temporal stores
// lose in cache and win in memory), and costs about the same on any larger size.
std::size_t trial_bytes() {
  return std::min(std::max(std::size_t{32} << 20, 2 * last_level_cache_bytes()),
                  std::size_t{512} << 20);
}

void trial_extent(std::size_t element_size, std::int64_t& rows, std::int64_t& cols) {
  const std::size_t limit = trial_bytes();
  while (static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * element_size > limit &&
         (rows > 256 || cols > 256)) {
    if (rows >= cols)
      rows = (rows / 2 + 7) / 8 * 8;
    else
      cols = (cols / 2 + 7) / 8 * 8;
  }
}

} // namespace

KernelParams choose_kernel(std::size_t element_size, const void* in, void* out, std::int64_t rows,
                           std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out) {
  KernelParams kernel = estimate(element_size);
  int measure = 0;
  const TransposeKey key{
      static_cast<std::int64_t>(element_size), omp_get_num_threads(), rows, cols, ld_in, ld_out};
#pragma omp single copyprivate(kernel, measure)
  {
    auto& c = choices();
    std::lock_guard g(c.lock);
    c.configure();
    const bool large =
        static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * element_size >=
        kTrialMinBytes;
    if (large && c.mode == Tuning::Measure) {
      c.load_wisdom();
      const auto it = c.chosen.find(key);
      if (it != c.chosen.end())
        kernel = it->second;
      else
        measure = 1;
    }
  }
  if (!measure)
    return kernel;

  std::int64_t trial_rows = rows, trial_cols = cols;
  trial_extent(element_size, trial_rows, trial_cols);
  const std::vector<KernelParams> list = candidates(element_size);
  // Each candidate is ranked by its mean time over several rounds. The fastest round favoured
  // kernels that run either fast or four times slower from one run to the next (2053 × 2063 c128
  // without software prefetch, 2 threads, Intel Xeon: 4.3 ms or 18-21 ms, against 5.1-6.3 ms
  // every time with it): they won trials, then ran the benchmark at 7 GB/s instead of 24. The
  // slowest round instead let the noise of one round decide between kernels 15 % apart.
  constexpr int kRounds = 4;
  std::vector<double> total(list.size(), 0.0);
  const bool cached = 2 * static_cast<std::size_t>(trial_rows) *
                          static_cast<std::size_t>(trial_cols) * element_size <=
                      last_level_cache_bytes();
  // One untimed run first: it faults in pages of `out` touched for the first time.
  run_kernel(list.front(), element_size, in, out, trial_rows, trial_cols, ld_in, ld_out);
  for (int round = 0; round < kRounds; ++round)
    for (std::size_t k = 0; k < list.size(); ++k) {
      // A transpose that fits in the last-level cache is timed in the state its own previous run
      // leaves, as repeated use runs it: ordinary stores leave the output cached and dirty,
      // non-temporal ones leave it in memory. Timed right after another candidate, each saw the
      // cache as that one left it: non-temporal stores then won by writing to lines the previous
      // streaming candidate had evicted, and lost (34-38 against 41 GB/s, 1000² f64, 2 threads,
      // Intel Xeon) after the caller had written the output with ordinary stores, while in
      // repeated runs they move 1000² f64 at 66-72 GB/s against 45 for ordinary stores.
      if (cached)
        run_kernel(list[k], element_size, in, out, trial_rows, trial_cols, ld_in, ld_out);
#pragma omp barrier
      const double t0 = omp_get_wtime();
      run_kernel(list[k], element_size, in, out, trial_rows, trial_cols, ld_in, ld_out);
      total[k] += omp_get_wtime() - t0; // the kernel ends at a barrier
    }
    // Every thread timed the same barrier-to-barrier spans; one thread's figures decide for all.
#pragma omp single copyprivate(kernel)
  {
    std::size_t winner = 0;
    for (std::size_t k = 1; k < list.size(); ++k)
      if (total[k] < total[winner])
        winner = k;
    kernel = list[winner];
    auto& c = choices();
    std::lock_guard g(c.lock);
    ++c.trials;
    c.chosen[key] = kernel;
    log::debug("transpose {}x{} ({} B elements, {} threads): {} in {:.3g} ms (estimate {:.3g} ms)",
               rows, cols, element_size, key.threads, kernel_name(kernel),
               total[winner] / kRounds * 1e3, total[0] / kRounds * 1e3);
    if (c.wisdom)
      c.wisdom->store(key, kernel_name(kernel));
  }
  return kernel;
}

std::size_t trials_run() {
  auto& c = choices();
  std::lock_guard g(c.lock);
  return c.trials;
}

void forget_choices() {
  auto& c = choices();
  std::lock_guard g(c.lock);
  c.chosen.clear();
  c.wisdom_loaded = false;
  c.trials = 0;
}

} // namespace detail
} // namespace tessera::cpu
