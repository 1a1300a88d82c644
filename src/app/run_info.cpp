#include "app/run_info.hpp"

#include <omp.h>

#include "core/log.hpp"
#include "cuda/device.hpp"
#include "mpi/timing_table.hpp"

namespace tessera::app {

int omp_threads() {
  return omp_get_max_threads();
}

std::vector<std::string> gpu_names() {
  std::vector<std::string> names;
  for (const auto& d : cuda::devices())
    names.push_back(d.name);
  return names;
}

io::Provenance make_provenance(const Context& ctx, const std::string& deck, Backend backend) {
  io::Provenance p;
  p.command_line = ctx.command_line;
  p.deck = deck;
  p.backend = std::string(backend_name(backend));
  p.ranks = ctx.nranks;
  p.threads = omp_threads();
  // Only a GPU run asks the CUDA runtime for names: a CPU run never starts it.
  if (backend == Backend::Cuda)
    p.gpus = gpu_names();
  return p;
}

void print_timing_table(const PhaseTimers& timers, const Context& ctx, std::FILE* out) {
  const std::string table = mpi::timing_table(timers, ctx.comm); // collective: every rank
  if (ctx.rank != 0 || log_verbosity() == Verbosity::Quiet)
    return;
  std::fprintf(out, "\nTiming (%d rank%s x %d thread%s; max over ranks):\n%s", ctx.nranks,
               ctx.nranks == 1 ? "" : "s", omp_threads(), omp_threads() == 1 ? "" : "s",
               table.c_str());
  std::fflush(out);
}

} // namespace tessera::app
