// The end-of-run timing table, as PETSc's -log_view: per phase, calls, the max time over ranks,
// imbalance (max/min over ranks) and GB/s (sum of bytes over ranks / max time). Collective.
#pragma once

#include <mpi.h>

#include <string>

#include "core/timers.hpp"

namespace tessera::mpi {

// Returns the formatted table on rank 0, "" elsewhere. Phases are matched by name across ranks;
// a phase missing on some rank counts as zero time there.
std::string timing_table(const PhaseTimers& timers, MPI_Comm comm);
// The same numbers as a JSON array on rank 0 ("" elsewhere), one object per phase:
// {"phase", "calls", "max_s", "min_s", "imbalance" (null when unbounded), "bytes" (all ranks),
//  "gbps" (null without bytes)}.
std::string timing_json(const PhaseTimers& timers, MPI_Comm comm);

} // namespace tessera::mpi
