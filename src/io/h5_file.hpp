// HDF5 files opened collectively by every rank of a communicator: with the MPI-IO driver when
// the library is parallel, or — with a serial HDF5, or TESSERA_HDF5_IO=serial — by each rank in
// turn with the default driver (io/h5_turns.hpp). Both write the same file format.
//
// File conventions (what a reader of tessera's output can rely on):
// - An output file is written as NAME.partial and renamed to NAME by commit(), after every
//   dataset and attribute is in it. A file called NAME is therefore always complete; a
//   NAME.partial left behind is the remainder of a run that was killed.
// - commit() writes the root attribute `complete` (64-bit integer, = 1) last, after flushing
//   everything else, so even a copy taken mid-rename can be checked: complete == 1.
// - The root group carries provenance attributes (io/provenance.hpp).
// - Matrices are 2-D datasets, row-major, of f32, f64 (IEEE little-endian) or complex numbers
//   stored as the compound {r, i} of two f32 (c64) or two f64 (c128) — h5py's default layout,
//   which numpy reads back as complex64 / complex128 (io/h5_type.hpp).
//
// A writable file destroyed without commit() is removed, so a failed run leaves nothing
// half-written behind (see ~H5File for how that works when only some ranks fail).
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <string>

#include "io/h5_handle.hpp"

namespace tessera::io {

class H5File {
public:
  // Collective. Throws on every rank naming the file: IoError when it is missing or
  // unreadable, InputError when it is not an HDF5 file.
  static H5File open_read(const std::string& path, MPI_Comm comm);
  // Collective. Creates `final_path + ".partial"` (replacing an old one); throws IoError on
  // every rank when the directory is missing or not writable.
  static H5File create(const std::string& final_path, MPI_Comm comm);

  H5File(H5File&&) noexcept;
  H5File& operator=(H5File&&) noexcept;
  // Closes the file; an uncommitted writable file is removed. Makes no MPI call of its own:
  // - on a normal scope exit (every rank gets here in the same order) it closes the file, which
  //   the MPI-IO driver does collectively, and rank 0 removes NAME.partial;
  // - while an exception unwinds, the other ranks may not be unwinding with it (an error that
  //   was not agreed on), and a collective close would then wait forever. So the MPI-IO handle
  //   is left open — HDF5 closes it at MPI_Finalize, or the job is aborted — and every
  //   unwinding rank removes NAME.partial itself (unlink is idempotent and needs no other rank).
  // In serial mode no handle stays open between calls, so only the removal is left to do.
  ~H5File();

  // Collective: flushes, writes `complete = 1` on the root group, closes and renames
  // NAME.partial → NAME (rank 0), then all ranks agree that it worked.
  void commit();
  // Collective: closes the file now (an uncommitted writable file is removed, as by the
  // destructor). Further use of the object is an error; destroying it is fine.
  void close();

  // The open HDF5 file in collective mode; H5I_INVALID_HID in serial mode, where each operation
  // opens the file by disk_path() in its turn.
  hid_t id() const noexcept;
  MPI_Comm comm() const noexcept;
  const std::string& path() const noexcept;      // the final name
  const std::string& disk_path() const noexcept; // NAME.partial until commit(), then NAME
  bool writable() const noexcept;
  // True when opened with the MPI-IO driver (collective transfers); false when the ranks take
  // turns.
  bool parallel() const noexcept;

private:
  H5File() = default;
  void release() noexcept;
  struct State;
  State* s_ = nullptr;
};

} // namespace tessera::io
