#include "mpi/backend_select.hpp"

#include <atomic>
#include <string>
#include <string_view>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "cuda/device.hpp"
#include "mpi/agreement.hpp"

namespace tessera::mpi {

namespace {

bool usable_here() {
  return cuda::compiled() && cuda::device_count() > 0;
}

// Logs the Auto decision at info level the first time, at debug level afterwards: every plan
// resolves its backend, and one line per run is enough.
void log_choice(int rank, Backend chosen, const std::string& why) {
  static std::atomic<int> logged_cpu{0}, logged_cuda{0};
  if (rank != 0)
    return;
  auto& flag = chosen == Backend::Cuda ? logged_cuda : logged_cpu;
  if (flag.exchange(1) == 0)
    log::info("backend: {} ({})", backend_name(chosen), why);
  else
    log::debug("backend: {} ({})", backend_name(chosen), why);
}

} // namespace

Backend resolve_backend_for_host_data(Backend requested, MPI_Comm comm) {
  if (requested != Backend::Auto)
    return resolve_backend(requested, comm);
  int rank = 0;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  log_choice(rank, Backend::Cpu,
             "the data is in host memory: its cores move it faster than a round trip to a GPU; "
             "--backend cuda to use one");
  return Backend::Cpu;
}

Backend resolve_backend(Backend requested, MPI_Comm comm) {
  if (requested == Backend::Cpu)
    return Backend::Cpu;
  int rank = 0, size = 1;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));

  if (requested == Backend::Cuda) {
    collectively(comm, [&] {
      if (!usable_here()) {
        std::string why = cuda::unavailable_reason();
        constexpr std::string_view said = "no usable GPU: "; // said once is enough
        if (why.starts_with(said))
          why.erase(0, said.size());
        TESSERA_THROW(InputError, "the CUDA backend was requested but there is no usable GPU: {}",
                      why);
      }
    });
    return Backend::Cuda;
  }

  // Auto: the lowest rank without a device, if any, explains the fallback.
  const int mine = usable_here() ? size : rank;
  int first_without = size;
  CHECK_MPI(MPI_Allreduce(&mine, &first_without, 1, MPI_INT, MPI_MIN, comm));
  if (first_without == size) {
    log_choice(rank, Backend::Cuda, size == 1 ? "a GPU is available" : "every rank has a GPU");
    return Backend::Cuda;
  }
  // Rank 0 logs; it needs the reason of the rank that lacks a device.
  std::string reason;
  if (rank == first_without)
    reason = cuda::unavailable_reason();
  if (first_without != 0) {
    int len = static_cast<int>(reason.size());
    if (rank == first_without)
      CHECK_MPI(MPI_Send(&len, 1, MPI_INT, 0, 0, comm));
    if (rank == 0) {
      CHECK_MPI(MPI_Recv(&len, 1, MPI_INT, first_without, 0, comm, MPI_STATUS_IGNORE));
      reason.resize(static_cast<std::size_t>(len));
    }
    if (rank == first_without && len > 0)
      CHECK_MPI(MPI_Send(reason.data(), len, MPI_CHAR, 0, 1, comm));
    if (rank == 0 && len > 0)
      CHECK_MPI(MPI_Recv(reason.data(), len, MPI_CHAR, first_without, 1, comm, MPI_STATUS_IGNORE));
  }
  if (reason.empty())
    reason = "no usable GPU";
  log_choice(rank, Backend::Cpu,
             size == 1 ? reason : "rank " + std::to_string(first_without) + ": " + reason);
  return Backend::Cpu;
}

} // namespace tessera::mpi
