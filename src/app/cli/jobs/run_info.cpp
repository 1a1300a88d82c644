#include "cli/jobs/run_info.hpp"

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

std::string timing_report(const Context& ctx, const std::string& table, const std::string& json,
                          const std::string& what) {
  const int threads = omp_threads();
  switch (ctx.timing) {
  case Timing::Off:
    return "";
  case Timing::Json:
    return fmt::format("{{\"timing\":{{\"ranks\":{},\"threads\":{},\"phases\":{}}}}}\n", ctx.nranks,
                       threads, json);
  case Timing::Table:
    break;
  }
  return fmt::format("\nTiming ({} rank{} x {} thread{}{}; max over ranks):\n{}", ctx.nranks,
                     ctx.nranks == 1 ? "" : "s", threads, threads == 1 ? "" : "s",
                     what.empty() ? "" : ", " + what, table);
}

void print_timing_table(const PhaseTimers& timers, const Context& ctx, std::FILE* out) {
  if (ctx.timing == Timing::Off) // every rank has the same setting: the collectives are skipped
    return;                      // together
  const std::string table =
      ctx.timing == Timing::Json ? "" : mpi::timing_table(timers, ctx.comm); // collective
  const std::string json = ctx.timing == Timing::Json ? mpi::timing_json(timers, ctx.comm) : "";
  if (ctx.rank != 0 || log_verbosity() == Verbosity::Quiet)
    return;
  std::fputs(timing_report(ctx, table, json, "").c_str(), out);
  std::fflush(out);
}

} // namespace tessera::app
