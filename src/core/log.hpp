// Logging: rank 0 logs at the chosen level; other ranks log only warnings and errors,
// prefixed "[rank N]", so a 1000-rank job prints one story, not a thousand.
#pragma once

#include <spdlog/spdlog.h>

namespace tessera {

enum class Verbosity { Quiet, Normal, Verbose };

// Call once per process after MPI_Init (rank and size known).
void init_logging(int rank, int nranks, Verbosity v = Verbosity::Normal);
int log_rank() noexcept;
// The level chosen at init_logging(): Quiet logs errors only, and silences reports (timing
// tables, the heat2d summary) and progress; results a command exists for (check's deck,
// reduce's values) are still printed.
Verbosity log_verbosity() noexcept;

namespace log {
using spdlog::debug;
using spdlog::error;
using spdlog::info;
using spdlog::warn;
} // namespace log

} // namespace tessera
