// tessera info: version, build features, MPI library and thread level, ranks, OpenMP threads,
// HDF5, and the GPUs this process sees.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/commands/byte_size.hpp"
#include "cli/jobs/run_info.hpp"
#include "core/build_info.hpp"
#include "cuda/device.hpp"
#include "io/provenance.hpp"
#include "mpi/communicator.hpp"

namespace tessera::app {

namespace {

const char* thread_level_name(int level) {
  if (level == MPI_THREAD_SINGLE)
    return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED)
    return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED)
    return "MPI_THREAD_SERIALIZED";
  if (level == MPI_THREAD_MULTIPLE)
    return "MPI_THREAD_MULTIPLE";
  return "unknown";
}

const char* yes_no(bool b) {
  return b ? "yes" : "no";
}

} // namespace

Command add_info(CLI::App& app, const Context& ctx) {
  Command c;
  c.sub = app.add_subcommand("info", "Version, build features, MPI, threads, HDF5 and GPUs");
  c.run = [&ctx]() -> int {
    // Collective parts first (every rank), then rank 0 prints.
    const mpi::Communicator comm(ctx.comm);
    const int local_rank = comm.node_local_rank();
    const int local_size = comm.node_local_size();
    if (ctx.rank != 0)
      return 0;
    std::string s;
    s += fmt::format("tessera {} (git {})\n", TESSERA_VERSION, build_git_hash());
    s += fmt::format("  build       CUDA backend: {}{}, NCCL: {}, parallel HDF5: {}\n",
                     yes_no(cuda::compiled()),
                     cuda::compiled() ? " (runtime " + cuda::runtime_version() + ")" : "",
                     yes_no(TESSERA_HAVE_NCCL), yes_no(io::hdf5_is_parallel()));
    s += fmt::format("  MPI         {}\n", io::mpi_library_version());
    s += fmt::format(
        "  threads     {} provided ({} requested){}\n", thread_level_name(ctx.thread_level),
        thread_level_name(MPI_THREAD_MULTIPLE),
        ctx.thread_level < MPI_THREAD_MULTIPLE ? "; I/O overlap needs MPI_THREAD_MULTIPLE" : "");
    s += fmt::format("  ranks       {} ({} on this node)\n", ctx.nranks, local_size);
    s += fmt::format("  OpenMP      {} thread{} per rank\n", omp_threads(),
                     omp_threads() == 1 ? "" : "s");
    s += fmt::format("  HDF5        {}{}\n", io::hdf5_version(),
                     io::hdf5_is_parallel() ? " (parallel)" : " (serial)");
    const auto gpus = cuda::list_devices();
    if (gpus.empty()) {
      const std::string why = cuda::unavailable_reason();
      s += fmt::format("  GPUs        none{}\n", why.empty() ? "" : " (" + why + ")");
    } else {
      s +=
          fmt::format("  GPUs        {} (CUDA driver {}); ranks use GPU (node-local rank mod {})\n",
                      gpus.size(), cuda::driver_version(), gpus.size());
      for (const auto& d : gpus)
        s += fmt::format("    [{}] {}, compute capability {}.{}, memory {} total, {} free{}\n",
                         d.index, d.name, d.cc_major, d.cc_minor,
                         format_bytes(double(d.memory_total)), format_bytes(double(d.memory_free)),
                         d.index == local_rank % static_cast<int>(gpus.size()) ? " <- rank 0" : "");
    }
    std::fputs(s.c_str(), stdout);
    std::fflush(stdout);
    return 0;
  };
  return c;
}

} // namespace tessera::app
