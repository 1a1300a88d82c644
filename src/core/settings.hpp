// Every TESSERA_* environment setting the library reads, in one table with one parser
// (docs/cli.md, "Environment", lists them). Plain C++ with no fmt in the header, so that CUDA
// sources can use it.
//
// The library reads a setting where it needs it, and a bad value there is ignored with a warning
// (a kernel or an allocation cannot stop for it); `tessera` checks every setting before it
// starts (environment_problems), so a typo on the command line's side fails at once.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::settings {

enum class Setting {
  Tuning,            // TESSERA_TUNING = measure | estimate
  Wisdom,            // TESSERA_WISDOM = a file, or empty for none
  CpuIsa,            // TESSERA_CPU_ISA = portable | avx2 | avx512
  Hdf5Io,            // TESSERA_HDF5_IO = auto | parallel | serial
  CollectiveTimeout, // TESSERA_COLLECTIVE_TIMEOUT = seconds > 0
  HugePages,         // TESSERA_HUGE_PAGES = 0 | 1
  Kernel,            // TESSERA_KERNEL = op:name[,op:name]
  TestHooks,         // TESSERA_TEST_HOOKS = 0 | 1: the test hooks below are read only when 1
  Fault,             // TESSERA_FAULT (test hook): an injected out-of-core failure
  IoDelayMs,         // TESSERA_IO_DELAY_MS (test hook): a pause on each staged read
  ComputeDelayMs,    // TESSERA_COMPUTE_DELAY_MS (test hook): a pause on each staged chunk
};

// The variable's name, e.g. "TESSERA_TUNING".
const char* variable(Setting s) noexcept;

// Whether the variable is in the environment at all (TESSERA_WISDOM= set empty means "none").
bool present(Setting s);

// The raw value; nullopt when unset or empty (and for a test hook while TESSERA_TEST_HOOKS is
// not 1).
std::optional<std::string> raw(Setting s);

// A setting with named values: the position of its value among them; `fallback` when unset, and,
// with a warning naming the accepted values, when the value is not one of them.
int choice(Setting s, int fallback);

// A number setting (CollectiveTimeout, IoDelayMs, ComputeDelayMs); `fallback` when unset, and,
// with a warning, when the value is not a number in the setting's range.
double number(Setting s, double fallback);

// The kernel that TESSERA_KERNEL picks for one operation's choice table, as its position among the
// table's kernels; nullopt when TESSERA_KERNEL names none for the operation (or names one the
// table lacks: a warning says so). Operations and their kernels: kernel_tables().
enum class KernelOp {
  CudaReduceRows, // cuda-reduce-rows = warp | staged | short | strided | tree | narrow
  Heat2dTiles,    // heat2d-tiles = shared (CUDA; the table's one kernel)
  Heat2dReduced,  // heat2d-reduced = warp | thread (CUDA)
};
std::optional<int> kernel(KernelOp op);

struct KernelTable {
  KernelOp op;
  std::string_view name;
  std::vector<std::string_view> kernels;
};
const std::vector<KernelTable>& kernel_tables();

// Every problem with the settings in the environment, one line each ("TESSERA_TUNING='fast' is
// not one of measure, estimate"); empty when all are valid. Also names the variables of earlier
// versions that no longer act (TESSERA_CUDA_ROWS_KERNEL, …) with their replacement.
std::vector<std::string> environment_problems();

} // namespace tessera::settings
