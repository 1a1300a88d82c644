#include "core/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace tessera {

namespace {
int g_rank = 0;
Verbosity g_verbosity = Verbosity::Normal;

// Every logger ever set, so that logger() can hand out a plain reference without a lock.
std::mutex g_loggers_mutex;
std::vector<std::shared_ptr<spdlog::logger>>& loggers() {
  static std::vector<std::shared_ptr<spdlog::logger>> all;
  return all;
}
spdlog::logger* silent_logger() {
  static spdlog::logger silent("tessera"); // no sinks
  silent.set_level(spdlog::level::off);
  return &silent;
}
std::atomic<spdlog::logger*> g_logger{nullptr};
} // namespace

spdlog::logger& logger() noexcept {
  spdlog::logger* l = g_logger.load(std::memory_order_acquire);
  return l ? *l : *silent_logger();
}

void set_logger(std::shared_ptr<spdlog::logger> l) {
  std::lock_guard lock(g_loggers_mutex);
  if (!l) {
    g_logger.store(nullptr, std::memory_order_release);
    return;
  }
  loggers().push_back(l);
  g_logger.store(l.get(), std::memory_order_release);
}

int log_rank() noexcept {
  return g_rank;
}

Verbosity log_verbosity() noexcept {
  return g_verbosity;
}

void init_logging(int rank, int nranks, Verbosity v) {
  g_rank = rank;
  g_verbosity = v;
  // stderr for everything: stdout stays clean for --json and tables, and the sink flushes
  // line by line so Slurm output files show progress as it happens.
  const auto name = fmt::format("tessera.{}", rank);
  auto logger = spdlog::get(name);
  if (!logger)
    logger = spdlog::stderr_logger_mt(name);
  spdlog::set_default_logger(logger);
  if (nranks > 1 && rank != 0)
    spdlog::set_pattern(fmt::format("[rank {}] %l: %v", rank));
  else
    spdlog::set_pattern("%^%l%$: %v");
  spdlog::level::level_enum level = spdlog::level::info;
  if (v == Verbosity::Quiet) // -q: errors only, on every rank
    level = spdlog::level::err;
  else if (rank != 0)
    level = spdlog::level::warn;
  else if (v == Verbosity::Verbose)
    level = spdlog::level::debug;
  spdlog::set_level(level);
  spdlog::flush_on(spdlog::level::trace);
  set_logger(logger);
}

} // namespace tessera
