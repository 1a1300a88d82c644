// Ranks × threads per node against its cores (see oversubscription.hpp).
#include "mpi/oversubscription.hpp"

#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>

#include "core/check.hpp"
#include "core/log.hpp"
#include "mpi/communicator.hpp"

namespace tessera::mpi {

namespace {

// The ranks of comm on this node.
unique_comm node_of(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  return unique_comm(node);
}

long online_cores() {
  return std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
}

NodeLoad most_loaded_node(MPI_Comm comm, MPI_Comm node, int threads_per_rank) {
  int node_rank = 0, node_size = 1, threads = 0;
  CHECK_MPI(MPI_Comm_rank(node, &node_rank));
  CHECK_MPI(MPI_Comm_size(node, &node_size));
  CHECK_MPI(MPI_Allreduce(&threads_per_rank, &threads, 1, MPI_INT, MPI_SUM, node));
  const long cores = online_cores();

  // The node leader whose threads exceed its cores by the largest factor tells the others.
  struct {
    double load;
    int rank;
  } mine{node_rank == 0 ? double(threads) / double(cores) : -1.0, comm_rank(comm)}, worst{};
  CHECK_MPI(MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));

  std::array<long, 3> numbers{node_size, threads, cores};
  CHECK_MPI(MPI_Bcast(numbers.data(), 3, MPI_LONG, worst.rank, comm));
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  CHECK_MPI(MPI_Get_processor_name(host, &len));
  CHECK_MPI(MPI_Bcast(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, worst.rank, comm));
  host[MPI_MAX_PROCESSOR_NAME - 1] = '\0';

  NodeLoad r;
  r.host = host;
  r.ranks = static_cast<int>(numbers[0]);
  r.threads = static_cast<int>(numbers[1]);
  r.cores = numbers[2];
  r.oversubscribed = r.threads > r.cores;
  return r;
}

// Where OMP_NUM_THREADS is not set: cores / ranks on the node, at least 1, at most the CPUs
// this rank may run on. Returns the threads per rank now in effect.
int share_cores(MPI_Comm node) {
  const char* set = std::getenv("OMP_NUM_THREADS");
  if (set != nullptr && *set != '\0')
    return omp_get_max_threads();
  int node_size = 1;
  CHECK_MPI(MPI_Comm_size(node, &node_size));
  const long cores = online_cores();
  long allowed = cores;
  cpu_set_t mask;
  if (::sched_getaffinity(0, sizeof mask, &mask) == 0)
    allowed = std::max(1, CPU_COUNT(&mask));
  const int threads = static_cast<int>(std::max(1L, std::min(allowed, cores / node_size)));
  omp_set_num_threads(threads);
  return threads;
}

void warn(const NodeLoad& n) {
  if (n.ranks > n.cores) { // no thread count helps: the advice is fewer ranks
    log::warn("node {} runs {} ranks on {} cores: oversubscribed, every phase will be slower; "
              "run at most {} ranks per node",
              n.host, n.ranks, n.cores, n.cores);
    return;
  }
  log::warn("node {} runs {} rank{} with {} OpenMP threads in all on {} cores: oversubscribed, "
            "every phase will be slower; use fewer ranks per node or set OMP_NUM_THREADS to "
            "at most {} (cores / ranks per node)",
            n.host, n.ranks, n.ranks == 1 ? "" : "s", n.threads, n.cores,
            std::max(1L, n.cores / std::max(1, n.ranks)));
}

} // namespace

NodeLoad most_loaded_node(MPI_Comm comm, int threads_per_rank) {
  return most_loaded_node(comm, node_of(comm).get(), threads_per_rank);
}

void fit_threads_to_node(MPI_Comm comm) {
  const unique_comm node = node_of(comm);
  const NodeLoad n = most_loaded_node(comm, node.get(), share_cores(node.get()));
  if (n.oversubscribed && comm_rank(comm) == 0)
    warn(n);
}

} // namespace tessera::mpi
