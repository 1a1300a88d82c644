// Plan-time tuning of the local transpose: on first use per (element size, threads, shape,
// leading dimensions) a short timed trial of the candidate kernels picks the fastest, which is
// kept for the process and, with a wisdom file, for later runs. Small transposes (cache
// resident, where the choice hardly matters and timings are noise) and the estimate mode take
// the estimated kernel without timing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cpu/transpose_kernel.hpp"

namespace tessera::cpu {

enum class Tuning { Estimate, Measure };

// Defaults: TESSERA_TUNING=estimate|measure (measure when unset) and TESSERA_WISDOM=FILE (none
// when unset); the command line's --tuning and --wisdom set them per run.
void set_tuning(Tuning t);
// The mode when neither TESSERA_TUNING nor set_tuning() chose one: the command line asks for
// Estimate in commands that run each plan once, where a trial would cost more than it saves.
void set_default_tuning(Tuning t);
Tuning tuning();
void set_wisdom_file(const std::string& path); // "" for none
// Unless TESSERA_WISDOM or set_wisdom_file() named a file: the per-user cache
// (detail::default_wisdom_cache()), for the command line. The library keeps no file by default.
void use_wisdom_cache();
std::string wisdom_file();

// The last-level cache (L3, else L2) in bytes, as the system reports it; 0 when it does not.
std::size_t last_level_cache_bytes();

namespace detail {

// Transposes at least this large (bytes of the input) are timed in Measure mode.
inline constexpr std::size_t kTrialMinBytes = std::size_t{4} << 20;

// The kernel for this transpose. A worksharing step: every thread of the calling team calls it
// with the same arguments and gets the same kernel. A trial writes to `out` (sub-blocks of it).
KernelParams choose_kernel(std::size_t element_size, const void* in, void* out, std::int64_t rows,
                           std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out);

// use_wisdom_cache() with the cache at `path` (tests; the command line takes the default path).
void use_wisdom_cache_at(const std::string& path);

// For tests: how many trials this process ran, and forgetting every choice (and the wisdom
// file's contents, which are read again on next use).
std::size_t trials_run();
void forget_choices();

} // namespace detail
} // namespace tessera::cpu
