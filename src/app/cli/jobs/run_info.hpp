// What a run records about itself: provenance for output files, the ranks x threads line, and
// the timing table every command that does work ends with.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/backend.hpp"
#include "core/timers.hpp"
#include "io/provenance.hpp"

namespace tessera::app {

// OpenMP threads per rank (omp_get_max_threads()).
int omp_threads();
// Names of the GPUs this process sees ("" entries never; empty without GPUs).
std::vector<std::string> gpu_names();

// Provenance for an output file of this run; `deck` is the effective deck ("" for commands).
// The GPUs are those of a Cuda run (none for Cpu: the CUDA runtime is left alone).
io::Provenance make_provenance(const Context& ctx, const std::string& deck, Backend backend);

// Collective. Prints the timing table (mpi::timing_table) on rank 0 to `out`, with a heading;
// as ctx.timing says: nothing (off), the table, or one JSON line (json). Nothing with -q.
void print_timing_table(const PhaseTimers& timers, const Context& ctx, std::FILE* out = stdout);
// Rank 0's text for a table and its JSON computed elsewhere (heat2d's run), with `what` in the
// heading ("" or e.g. "cpu"); "" when ctx.timing is off.
std::string timing_report(const Context& ctx, const std::string& table, const std::string& json,
                          const std::string& what);

} // namespace tessera::app
