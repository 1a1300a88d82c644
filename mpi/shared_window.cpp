#include "mpi/shared_window.hpp"

#include <cstdint>
#include <exception>
#include <utility>

#include "core/check.hpp"
#include "core/log.hpp"
#include "mpi/communicator.hpp"

namespace tessera::mpi {

bool on_one_node(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  unique_comm owned(node);
  return comm_size(node) == comm_size(comm);
}

namespace {

// Segments start on a page boundary of their own. Open MPI places a segment a few words past
// one (offset 264 in a page, seen with 4.1), which leaves every row of a transpose's send buffer
// off the cache lines: each 64-byte store then straddles two lines and non-temporal stores are
// out, and packing into the window ran at a quarter of the speed of packing into private memory
// (8192² f64, 2 ranks). Offsets within a page are the same in every process that maps a
// segment, so each rank finds the same aligned start of another's segment.
constexpr std::uintptr_t kSegmentAlignment = 4096;

template <class P>
P* aligned_start(P* p) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return reinterpret_cast<P*>((a + kSegmentAlignment - 1) / kSegmentAlignment * kSegmentAlignment);
}

} // namespace

SharedWindow::SharedWindow(MPI_Comm comm, std::size_t bytes) {
  MPI_Info info = MPI_INFO_NULL;
  CHECK_MPI(MPI_Info_create(&info));
  // Each segment on its owner's NUMA node: receivers read remotely, senders write locally.
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void* base = nullptr;
  const std::size_t padded = bytes == 0 ? 0 : bytes + kSegmentAlignment;
  const int rc =
      MPI_Win_allocate_shared(static_cast<MPI_Aint>(padded), 1, info, comm, &base, &win_);
  MPI_Info_free(&info);
  CHECK_MPI(rc);
  local_ = bytes == 0 ? base : aligned_start(base);
  // Touch every page now, from the threads that will write it, so that page faults neither
  // slow nor skew (in the exchange trial) the first execute that uses the window.
  auto* bytes_at = static_cast<unsigned char*>(local_);
  const auto n = static_cast<std::int64_t>(bytes);
#pragma omp parallel for schedule(static)
  for (std::int64_t off = 0; off < n; off += 4096)
    bytes_at[off] = 0;
  const int size = comm_size(comm), me = comm_rank(comm);
  peers_.resize(static_cast<std::size_t>(size));
  std::vector<MPI_Aint> lengths(static_cast<std::size_t>(size), 0);
  for (int q = 0; q < size; ++q) {
    int unit = 0;
    void* p = nullptr;
    CHECK_MPI(MPI_Win_shared_query(win_, q, &lengths[q], &unit, &p));
    if (lengths[q] > 0) {
      void* start = aligned_start(p);
      lengths[q] -= static_cast<MPI_Aint>(static_cast<char*>(start) - static_cast<char*>(p));
      p = start;
    }
    peers_[static_cast<std::size_t>(q)] = p;
  }
  // One passive-target epoch for the window's life; MPI_Win_sync orders the accesses.
  CHECK_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));
  // Map the other segments into this process now, one read per page once their owners have
  // touched them: the first execute would otherwise take a page fault per page it reads.
  CHECK_MPI(MPI_Barrier(comm));
  unsigned sink = 0;
  for (int q = 0; q < size; ++q) {
    const auto* seg = static_cast<const volatile unsigned char*>(peers_[q]);
    for (MPI_Aint off = 0; q != me && off < lengths[q]; off += 4096)
      sink += seg[off];
  }
  (void)sink;
}

SharedWindow::~SharedWindow() {
  release();
}

SharedWindow::SharedWindow(SharedWindow&& o) noexcept
    : win_(std::exchange(o.win_, MPI_WIN_NULL)), local_(std::exchange(o.local_, nullptr)),
      peers_(std::move(o.peers_)) {}

SharedWindow& SharedWindow::operator=(SharedWindow&& o) noexcept {
  if (this != &o) {
    release();
    win_ = std::exchange(o.win_, MPI_WIN_NULL);
    local_ = std::exchange(o.local_, nullptr);
    peers_ = std::move(o.peers_);
  }
  return *this;
}

void SharedWindow::sync() const {
  CHECK_MPI(MPI_Win_sync(win_));
}

void SharedWindow::release() noexcept {
  if (win_ == MPI_WIN_NULL)
    return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && std::uncaught_exceptions() == 0) {
    if (MPI_Win_unlock_all(win_) != MPI_SUCCESS || MPI_Win_free(&win_) != MPI_SUCCESS)
      log::warn("freeing a shared-memory window failed");
  }
  win_ = MPI_WIN_NULL;
  local_ = nullptr;
  peers_.clear();
}

} // namespace tessera::mpi
