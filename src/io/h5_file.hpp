// HDF5 files opened collectively by every rank of a communicator (MPI-IO driver when the
// library is parallel; with a serial HDF5 each rank opens the file in turn — see h5_matrix.hpp).
//
// Output files are created as NAME.partial and become NAME only in commit(), after the root
// attribute complete = 1 has been written last. A file that is destroyed without commit() is
// removed, so a failed run leaves nothing half-written behind.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <string>

#include "core/unique_handle.hpp"

namespace tessera::io {

struct HidTraits {
  using type = hid_t;
  static hid_t null() noexcept { return H5I_INVALID_HID; }
  static void destroy(hid_t id) noexcept; // H5Xclose by the id's type
};
using unique_hid = unique_handle<HidTraits>;

class H5File {
public:
  // Collective. Throws IoError / InputError on every rank naming the file when it is missing,
  // not HDF5, or unreadable.
  static H5File open_read(const std::string& path, MPI_Comm comm);
  // Collective. Creates `final_path + ".partial"`; fails on every rank when the directory is
  // missing or not writable.
  static H5File create(const std::string& final_path, MPI_Comm comm);

  H5File(H5File&&) noexcept;
  H5File& operator=(H5File&&) noexcept;
  ~H5File(); // removes an uncommitted .partial

  // Collective: writes `complete = 1` on the root group, closes and renames NAME.partial → NAME.
  void commit();

  hid_t id() const noexcept;
  MPI_Comm comm() const noexcept;
  const std::string& path() const noexcept; // the final name
  bool writable() const noexcept;

private:
  H5File() = default;
  struct State;
  State* s_ = nullptr;
};

} // namespace tessera::io
