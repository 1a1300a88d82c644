// HDF5 files opened collectively by every rank of a communicator: with the MPI-IO driver when
// the library is parallel, or — with a serial HDF5, or TESSERA_HDF5_IO=serial — by each rank in
// turn with the default driver (io/h5_turns.hpp). Both write the same file format.
//
// File conventions (what a reader of tessera's output can rely on):
// - An output file NAME is written under a temporary name of its own, NAME.XXXXXX.partial (six
//   random letters and digits), and renamed to NAME by commit(), after every dataset and
//   attribute is in it. A file called NAME is therefore always complete; a NAME.XXXXXX.partial
//   left behind is the remainder of a run that was killed (the next run writing NAME removes it).
// - A writer owns its output: from create() to commit() rank 0 holds an exclusive lock on
//   NAME.lock, so a second writer of NAME fails at once, naming the first
//   (io/output_claim.hpp; where the file system has no locks, a warning says so).
// - NAME must be a regular file or absent; devices, FIFOs, sockets and directories are refused.
//   A symbolic link is followed: the file it points to is written, the link stays.
// - commit() writes the root attribute `complete` (64-bit integer, = 1) last, then closes the
//   file before the rename, so even a copy taken mid-rename can be checked: complete == 1.
//   Checkpoints (Durability::Synced) flush everything else first, which with the MPI-IO driver
//   also forces the data to the disk (MPI_File_sync) before the rename, as a restart needs after
//   a node crash; other outputs leave that to the kernel, as `cp` does (the sync was half of a
//   transpose's time: docs/performance.md "Whole jobs").
// - The root group carries provenance attributes (io/provenance.hpp).
// - A sidecar (add_sidecar), such as the XDMF description NAME.xmf of a heat2d output, is
//   committed with the file: when NAME appears, NAME.xmf is either absent (a run killed between
//   the two renames) or describes this NAME. Where NAME is a symbolic link, the sidecar sits
//   next to the file the link points to, and names that file.
// - Matrices are 2-D datasets, row-major, of f32, f64 (IEEE little-endian) or complex numbers
//   stored as the compound {r, i} of two f32 (c64) or two f64 (c128) — h5py's default layout,
//   which numpy reads back as complex64 / complex128 (io/h5_type.hpp).
//
// A writable file destroyed without commit() is removed, so a failed run leaves nothing
// half-written behind (see ~H5File for how that works when only some ranks fail).
//
// Collective writes and a full disk: before each collective operation on a writable file,
// rank 0 reserves the space HDF5 has allocated so far plus some slack (fallocate), and all
// ranks agree on the result, so "No space left on device" shows on every rank before any rank
// is inside a collective write that would fail on some ranks only.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io/h5_handle.hpp"

namespace tessera::io {

class H5File {
public:
  // Collective. Throws on every rank naming the file: IoError when it is missing or
  // unreadable, InputError when it is not an HDF5 file.
  static H5File open_read(const std::string& path, MPI_Comm comm);
  // Collective. Takes `final_path` (its lock) and creates its temporary; throws on every rank:
  // IoError when the directory is missing or not writable, when another writer holds the
  // output, or when it exists and is not a regular file; InputError when the name is too long.
  // Append: an existing final_path is copied into the temporary, which is opened for adding to
  // (io/output_append.cpp says why a copy); without one, as Replace.
  enum class Mode { Replace, Append };
  static H5File create(const std::string& final_path, MPI_Comm comm, Mode mode = Mode::Replace);

  H5File(H5File&&) noexcept;
  H5File& operator=(H5File&&) noexcept;
  // Closes the file; an uncommitted writable file is removed. Makes no MPI call of its own:
  // - on a normal scope exit (every rank gets here in the same order) it closes the file, which
  //   the MPI-IO driver does collectively, and rank 0 removes NAME.partial;
  // - while an exception unwinds, the other ranks may not be unwinding with it (an error that
  //   was not agreed on), and a collective close would then wait forever. So the MPI-IO handle
  //   is left open — close_abandoned_files() closes it once the ranks are together again, or
  //   the job is aborted — and every unwinding rank removes the temporary itself (unlink is
  //   idempotent and needs no other rank); rank 0 releases the lock.
  // In serial mode no handle stays open between calls, so only the removal is left to do.
  ~H5File();

  // Collective: writes `complete = 1` on the root group (Synced: after a flush), closes and
  // renames the temporary → NAME (rank 0; then the lock is released), then all ranks agree that
  // it worked.
  enum class Durability { Closed, Synced };
  void commit(Durability durability = Durability::Closed);
  // Collective: a text file target + suffix committed with this one (see the conventions
  // above); `contents` gets the file name of the HDF5 file as the sidecar refers to it (relative,
  // in the same directory) and runs on rank 0. Throws on every rank (IoError naming the
  // sidecar) when rank 0 cannot write it.
  void add_sidecar(const std::string& suffix,
                   const std::function<std::string(const std::string& data_file)>& contents);
  // Collective: throws on every rank, as add_sidecar(suffix, …) would for the sidecar's name,
  // now (too long, or there and not a regular file). For sidecars written at the end of a run.
  void expect_sidecar(const std::string& suffix);
  // Collective: closes the file now (an uncommitted writable file is removed, as by the
  // destructor). Further use of the object is an error; destroying it is fine.
  void close();

  // Makes sure the disk holds what the file will need for the datasets created so far (their
  // full storage, from note_dataset) plus slack for the metadata, so that a full disk shows as
  // IoError ("No space left on device", naming the file) before a write fails halfway.
  // Collective mode: collective, rank 0 reserves (fallocate) and every rank throws when it
  // failed; called before collective writes and metadata changes. Serial mode: no-op — each
  // rank reserves in its turn instead (reserve_in_turn).
  void reserve_space();
  // Serial mode, inside this rank's turn, before it opens the file: the same reservation, by
  // this rank alone (the file's own close gives back what lies beyond HDF5's end of allocation,
  // so each turn reserves again). Throws IoError on this rank.
  void reserve_in_turn() const;
  // Records a dataset created (every rank, with the same values): its extent, chunk shape
  // (empty: contiguous) and element size; a compressed one is left out (its size is unknown).
  void note_dataset(const std::string& path, std::vector<hsize_t> dims, std::vector<hsize_t> chunk,
                    std::size_t element_size, bool compressed = false);
  // Records a new extent of a dataset noted before (every rank).
  void note_extent(const std::string& path, const std::vector<hsize_t>& dims);

  // The open HDF5 file in collective mode; H5I_INVALID_HID in serial mode, where each operation
  // opens the file by disk_path() in its turn.
  hid_t id() const noexcept;
  MPI_Comm comm() const noexcept;
  const std::string& path() const noexcept;      // the final name
  const std::string& disk_path() const noexcept; // the temporary until commit(), then NAME
  bool writable() const noexcept;
  // True when opened with the MPI-IO driver (collective transfers); false when the ranks take
  // turns.
  bool parallel() const noexcept;

private:
  H5File() = default;
  void release() noexcept;
  struct State;
  static std::uint64_t space_needed(const State& s);
  State* s_ = nullptr;
};

// Closes the MPI-IO handles that files destroyed during unwinding left open (see ~H5File), in
// the order they were left. Collective: call it where every rank is known to be, after an error
// that all of them agreed on — tessera's main and the library's entry points do, before MPI ends;
// HDF5 would otherwise close them inside MPI_Finalize, during its own shutdown, and crash there.
// False when a close failed even so (the metadata it flushes could not be written): HDF5 then
// still holds the file and cannot shut down cleanly, and other ranks may be waiting inside their
// close for this one, so the process must not go on to MPI_Finalize.
[[nodiscard]] bool close_abandoned_files() noexcept;

} // namespace tessera::io
