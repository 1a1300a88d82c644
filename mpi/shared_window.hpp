// An MPI-3 shared-memory window: every rank of a communicator that lives on one node allocates
// a segment that all the others can read with plain loads. The transpose uses it as its send
// buffer, so that receivers copy their pieces straight from the senders' memory: one copy fewer
// than any message-based exchange.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace tessera::mpi {

// True when every rank of comm shares one node (collective).
bool on_one_node(MPI_Comm comm);

class SharedWindow {
public:
  SharedWindow() = default;
  // Collective over comm, which must live on one node. `bytes` may differ between ranks and be 0.
  SharedWindow(MPI_Comm comm, std::size_t bytes);
  // Collective (MPI_Win_free), except while an exception unwinds: then the window is left to
  // MPI_Finalize, because the other ranks may never come to free it.
  ~SharedWindow();
  SharedWindow(SharedWindow&& o) noexcept;
  SharedWindow& operator=(SharedWindow&& o) noexcept;
  SharedWindow(const SharedWindow&) = delete;
  SharedWindow& operator=(const SharedWindow&) = delete;

  explicit operator bool() const noexcept { return win_ != MPI_WIN_NULL; }
  void* local() const noexcept { return local_; }
  // Rank q's segment, readable here.
  const void* peer(int q) const noexcept { return peers_[static_cast<std::size_t>(q)]; }
  // Makes this rank's stores visible to the others and theirs to this rank; pair it with a
  // barrier (store → sync → barrier → sync → load).
  void sync() const;

private:
  void release() noexcept;
  MPI_Win win_ = MPI_WIN_NULL;
  void* local_ = nullptr;
  std::vector<const void*> peers_;
};

} // namespace tessera::mpi
