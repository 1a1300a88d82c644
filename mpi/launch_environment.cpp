#include "mpi/launch_environment.hpp"

#include <cstdlib>

namespace tessera::mpi {

namespace {

const char* env(const char* name) noexcept {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : nullptr;
}

long env_long(const char* name, long otherwise) noexcept {
  const char* v = env(name);
  if (v == nullptr)
    return otherwise;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return end != v && *end == '\0' ? x : otherwise;
}

// Launchers name the rank of each process they start in one of these.
constexpr const char* kRankVariables[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                          "MPI_LOCALRANKID", "SLURM_PROCID"};

bool all_ranks_on_this_node() noexcept {
  if (started_without_launcher())
    return true;
  const long size = env_long("OMPI_COMM_WORLD_SIZE", -1);
  const long local = env_long("OMPI_COMM_WORLD_LOCAL_SIZE", -2);
  if (size > 0 && size == local)
    return true;
  // srun on one node (Open MPI started by Slurm's PMIx).
  return env("OMPI_COMM_WORLD_SIZE") == nullptr && env_long("SLURM_STEP_NUM_NODES", 0) == 1;
}

void set_default(const char* name, const char* value) noexcept {
  (void)::setenv(name, value, 0); // 0: a value the user set stays
}

} // namespace

int launcher_rank() noexcept {
  for (const char* name : kRankVariables)
    if (const long r = env_long(name, -1); r >= 0)
      return static_cast<int>(r);
  return 0;
}

bool started_without_launcher() noexcept {
  // SLURM_PROCID alone is a batch script's own shell, not a launched rank.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                           "SLURM_STEP_ID", "MPI_LOCALNRANKS"})
    if (env(name) != nullptr)
      return false;
  return true;
}

void prefer_node_local_transports() noexcept {
  // hwloc's GPU plugins open the CUDA and NVML drivers while MPI_Init reads the topology, most of
  // a small job's time on a GPU host (docs/performance.md, "Whole jobs"). MPI binds to cores
  // only; tessera finds its GPUs itself.
  set_default("HWLOC_COMPONENTS", "-cuda,-nvml,-opencl,-rsmi,-levelzero");
  // MPI-IO's shared file pointers, which neither tessera nor HDF5 uses: the sm component maps a
  // file in the session directory for every file opened, and singletons share that directory
  // (Open MPI names it by a job family that is 0 for all of them), so two started at once
  // removed it under each other ("mca_sharedfp_sm_component_file_query: Error").
  set_default("OMPI_MCA_sharedfp", "^sm");
  if (started_without_launcher())
    set_default("OMPI_MCA_ess_singleton_isolated", "1");
  if (!all_ranks_on_this_node())
    return;
  // A user's `--mca pml …` reaches the ranks as OMPI_MCA_pml and wins.
  if (env("OMPI_MCA_pml") == nullptr && env("OMPI_MCA_mtl") == nullptr) {
    set_default("OMPI_MCA_pml", "ob1");
    set_default("OMPI_MCA_btl", "self,vader");
  }
}

} // namespace tessera::mpi
