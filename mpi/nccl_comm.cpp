// NcclComm and the one-GPU-per-rank check. The only file of mpi/ that includes NCCL's (and so
// CUDA's) headers, and only when the build has NCCL; without it, nccl_comm.hpp's declarations
// give the stubs (core/backend_fn.hpp).
#include "mpi/nccl_comm.hpp"

#include <algorithm>
#include <array>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "cuda/device.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"

#if TESSERA_HAVE_NCCL
#include <nccl.h>
#endif

namespace tessera::mpi {

bool nccl_compiled() noexcept {
  return TESSERA_HAVE_NCCL != 0;
}

NcclComm& NcclComm::operator=(NcclComm&& o) noexcept {
  if (this != &o) {
    release();
    comm_ = std::exchange(o.comm_, nullptr);
    rank_ = o.rank_;
    size_ = o.size_;
  }
  return *this;
}

NcclComm::~NcclComm() {
  release();
}

#if TESSERA_HAVE_NCCL

namespace {

// What each rank tells the others about its device. The UUID identifies a GPU across nodes
// (PCI bus ids repeat from node to node); the bus id and host name are for the message.
struct DeviceId {
  int usable = 0;
  std::array<unsigned char, 16> uuid{};
  std::array<char, 32> bus{};
  std::array<char, MPI_MAX_PROCESSOR_NAME> host{};
};

DeviceId this_device() {
  DeviceId id;
  int len = 0;
  MPI_Get_processor_name(id.host.data(), &len);
  try {
    const cuda::DeviceIdentity device = cuda::device_identity(cuda::ensure_device_bound());
    id.uuid = device.uuid;
    device.pci_bus_id.copy(id.bus.data(), id.bus.size() - 1);
    id.usable = 1;
  } catch (const Error&) {
    // usable stays 0: reported by every rank below
  }
  return id;
}

} // namespace

std::string nccl_unavailable(MPI_Comm comm) {
  const int size = comm_size(comm);
  const DeviceId mine = this_device();
  std::vector<DeviceId> all(static_cast<std::size_t>(size));
  constexpr int n = static_cast<int>(sizeof(DeviceId));
  CHECK_MPI(MPI_Allgather(&mine, n, MPI_BYTE, all.data(), n, MPI_BYTE, comm));
  for (int r = 0; r < size; ++r)
    if (!all[r].usable)
      return fmt::format("rank {} has no usable GPU", r);
  for (int r = 0; r < size; ++r)
    for (int s = r + 1; s < size; ++s)
      if (all[r].uuid == all[s].uuid)
        return fmt::format("ranks {} and {} share the GPU {} on {}; NCCL needs one GPU per rank", r,
                           s, all[r].bus.data(), all[r].host.data());
  return "";
}

NcclComm::NcclComm(MPI_Comm comm) : rank_(comm_rank(comm)), size_(comm_size(comm)) {
  ncclUniqueId id{};
  collectively(comm, [&] {
    if (rank_ == 0)
      CHECK_NCCL(ncclGetUniqueId(&id));
  });
  CHECK_MPI(MPI_Bcast(&id, static_cast<int>(sizeof id), MPI_BYTE, 0, comm));
  cuda::ensure_device_bound();
  ncclComm_t c = nullptr;
  collectively(comm, [&] { CHECK_NCCL(ncclCommInitRank(&c, size_, id, rank_)); });
  comm_ = c;
}

void NcclComm::release() noexcept {
  if (comm_ == nullptr)
    return;
  if (const ncclResult_t rc = ncclCommDestroy(comm_); rc != ncclSuccess)
    log::warn("ncclCommDestroy failed: {}", ncclGetErrorString(rc));
  comm_ = nullptr;
}

void NcclComm::exchange(const void* send, const std::vector<std::int64_t>& send_counts,
                        const std::vector<std::int64_t>& send_offsets, void* recv,
                        const std::vector<std::int64_t>& recv_counts,
                        const std::vector<std::int64_t>& recv_offsets, std::size_t element_size,
                        CUstream_st* stream) {
  TESSERA_REQUIRE(comm_ != nullptr, InternalError, "NcclComm::exchange on an empty communicator");
  const auto* s = static_cast<const char*>(send);
  auto* r = static_cast<char*>(recv);
  const auto bytes = [&](std::int64_t elements) {
    return static_cast<std::size_t>(elements) * element_size;
  };
  CHECK_NCCL(ncclGroupStart());
  try {
    for (int q = 0; q < size_; ++q) {
      if (q == rank_)
        continue;
      const auto k = static_cast<std::size_t>(q);
      // Byte counts as ncclChar: size_t, so no limit at 2^31 elements.
      if (send_counts[k] > 0)
        CHECK_NCCL(ncclSend(s + bytes(send_offsets[k]), bytes(send_counts[k]), ncclChar, q, comm_,
                            stream));
      if (recv_counts[k] > 0)
        CHECK_NCCL(ncclRecv(r + bytes(recv_offsets[k]), bytes(recv_counts[k]), ncclChar, q, comm_,
                            stream));
    }
  } catch (...) {
    (void)ncclGroupEnd();
    throw;
  }
  CHECK_NCCL(ncclGroupEnd());
}

#endif

} // namespace tessera::mpi
