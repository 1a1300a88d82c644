// Logging: rank 0 logs at the chosen level; other ranks log only warnings and errors,
// prefixed "[rank N]", so a 1000-rank job prints one story, not a thousand.
//
// Everything tessera logs goes through its own logger (logger()), never spdlog's default one:
// a library is a guest, silent until the application asks (tessera/log.hpp), and its messages
// never mix with an application's own spdlog output. The CLI turns it on with init_logging().
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <utility>

namespace tessera {

enum class Verbosity { Quiet, Normal, Verbose };

// Call once per process after MPI_Init (rank and size known): tessera's logger then writes to
// stderr (and becomes spdlog's default logger, as the CLI expects).
void init_logging(int rank, int nranks, Verbosity v = Verbosity::Normal);
int log_rank() noexcept;
// The level chosen at init_logging(): Quiet logs errors only, and silences reports (timing
// tables, the heat2d summary) and progress; results a command exists for (check's deck,
// reduce's values) are still printed.
Verbosity log_verbosity() noexcept;

// tessera's logger: one with no sink and level off until init_logging() or set_logger().
spdlog::logger& logger() noexcept;
// Replaces it (the library's set_log_level / set_log_sink). Loggers set before stay alive, so
// a message being logged on another thread meanwhile is safe.
void set_logger(std::shared_ptr<spdlog::logger> l);

namespace log {
#define TESSERA_LOG_LEVEL(name)                                                                    \
  template <class... Args>                                                                         \
  void name(spdlog::format_string_t<Args...> fmt, Args&&... args) {                                \
    logger().name(fmt, std::forward<Args>(args)...);                                               \
  }                                                                                                \
  template <class T>                                                                               \
  void name(const T& message) {                                                                    \
    logger().name(message);                                                                        \
  }
TESSERA_LOG_LEVEL(debug)
TESSERA_LOG_LEVEL(info)
TESSERA_LOG_LEVEL(warn)
TESSERA_LOG_LEVEL(error)
#undef TESSERA_LOG_LEVEL
} // namespace log

} // namespace tessera
