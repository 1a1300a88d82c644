// How a writer owns its output file while it writes it (rank 0's side of H5File::create and
// commit; io/h5_file.hpp states the conventions a reader can rely on).
//
// - The output NAME must be a regular file or absent. A symbolic link is followed: the file is
//   written where the link points (the link stays a link); devices, FIFOs, sockets and
//   directories are refused, so a rename never replaces /dev/null or a pipe.
// - The writer holds an exclusive flock() on NAME.lock from create to commit (or failure), so a
//   second job writing the same NAME fails at once, naming the holder. Where the file system
//   has no locks (some NFS and Lustre mounts), it warns and goes on without.
// - The data goes to a temporary of its own, NAME.XXXXXX.partial (created with O_EXCL, so two
//   writers never share one), renamed to NAME by commit(). With the lock held, temporaries of
//   NAME left behind by killed runs are removed. A disk without room for the temporary's first
//   MiB fails here, before HDF5 has a file open that it could not close again.
// - Sidecars (add_sidecar: small text files that describe the output, such as its XDMF file
//   NAME.xmf) are written as NAME.xmf.XXXXXX.partial while the lock is held and committed with
//   the output: commit() removes an old NAME.xmf, renames the output, then the sidecar. A run
//   killed between the renames leaves a complete NAME without a sidecar, never a sidecar that
//   describes another file.
// - Names are checked before any MPI-IO call: components longer than the file system allows, and
//   paths longer than Open MPI's MPI-IO handles (it overflows a fixed buffer), are errors.
// - A signal that ends the process (tessera's file commands) removes the temporaries and the
//   lock on its way out (core/signal_removals.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/output_name.hpp"

namespace tessera::io::detail {

// What the temporary adds to NAME: ".XXXXXX.partial".
inline constexpr std::size_t kTemporarySuffixLength = 15;

// check_mpiio_name (the MPI-IO name limits) lives in io/output_name.hpp.

// Makes sure the file `path` (the temporary of the output `name`) has `bytes` of disk space, as
// OutputClaim::reserve does; for ranks other than the claim's holder.
void reserve_file(const std::string& path, std::uint64_t bytes, const std::string& name);

class OutputClaim {
public:
  // Rank 0: checks the name, takes the lock, creates the temporary. `mpiio`: the ranks will
  // open the temporary through MPI-IO (its name limits apply). Throws IoError / InputError
  // naming `name`.
  static OutputClaim take(const std::string& name, bool mpiio, int nranks);

  OutputClaim() = default;
  OutputClaim(OutputClaim&&) noexcept;
  OutputClaim& operator=(OutputClaim&&) noexcept;
  OutputClaim(const OutputClaim&) = delete;
  OutputClaim& operator=(const OutputClaim&) = delete;
  ~OutputClaim(); // abandon()

  const std::string& temporary() const noexcept { return temporary_; }
  const std::string& target() const noexcept { return target_; }

  // Appending (io/output_append.cpp): copies the target, when it exists, into the temporary,
  // which the writer then opens and adds to; returns the bytes copied, or nullopt when there is
  // no target (the writer creates a new file). Throws IoError naming the output when the copy
  // fails, InputError when the target is not an HDF5 file.
  std::optional<std::uint64_t> copy_target();
  // Makes sure the temporary has `bytes` of disk space (fallocate), so that a full disk shows
  // here, on rank 0, rather than inside a collective write. Throws IoError ("No space left on
  // device") naming the file; returns quietly where the file system cannot preallocate.
  void reserve(std::uint64_t bytes);
  // After HDF5 cut the file back to its end of allocation (a flush): reserve() again.
  void forget_reservation() noexcept {
    if (reserved_ != UINT64_MAX)
      reserved_ = 0;
  }
  // Writes `contents` to a temporary of target() + suffix, committed with the output. Throws
  // IoError naming the sidecar when it cannot be written or when target() + suffix exists and
  // is not a regular file.
  void add_sidecar(const std::string& suffix, const std::string& contents);
  // The checks add_sidecar makes of target() + suffix's name (its length with the temporary's
  // suffix, and that it is absent or a regular file), made now: an output whose sidecar is
  // written at the end of a run fails before the run instead.
  void check_sidecar(const std::string& suffix) const;
  // Renames the temporary to the target (and the sidecars to theirs), then releases the lock.
  // Throws IoError naming the output when the rename fails or the target has become something other
  // than a regular file.
  void commit();
  // Removes the temporary and the sidecars' (unless committed) and releases the lock. Never
  // throws.
  void abandon() noexcept;
  // Gives the disk space of an uncommitted temporary back (truncates it to nothing), for a file
  // about to be closed without commit: HDF5's close still writes the metadata it holds, and on
  // a full disk it needs the room (a failed close leaves HDF5 unable to shut down cleanly).
  void discard_contents() noexcept;

private:
  void release_lock() noexcept;

  struct Sidecar {
    std::string target, temporary;
    int removal_slot = -1; // signal_removals: removed if a signal ends the process
  };

  std::string name_;      // as given, for messages
  std::string target_;    // name_ with symbolic links followed
  std::string temporary_; // target_ + ".XXXXXX.partial"
  std::string lock_path_; // target_ + ".lock"
  int lock_fd_ = -1;      // -1: no lock held
  int temp_fd_ = -1;      // open on the temporary, for reserve()
  // signal_removals slots of the temporary and the lock: a signal that ends the process
  // removes them (core/signal_removals.hpp).
  int temp_slot_ = -1;
  int lock_slot_ = -1;
  std::uint64_t reserved_ = 0;
  bool committed_ = false;
  std::vector<Sidecar> sidecars_;
};

} // namespace tessera::io::detail
