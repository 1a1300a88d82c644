// H5File: collective open / create, commit by rename, removal of uncommitted output.
#include "io/h5_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <utility>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_error.hpp"
#include "io/h5_turns.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"

namespace tessera::io {

namespace fs = std::filesystem;

struct H5File::State {
  unique_hid file; // open in collective mode only
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  std::string path;
  std::string disk_path;
  bool writable = false;
  bool parallel = false;
  bool committed = false;
  bool closed = false;
  bool removed = false; // the .partial of an uncommitted file is gone
  // std::uncaught_exceptions() when the file was opened: more at destruction means the
  // destructor runs because an exception unwinds (see ~H5File).
  int uncaught = 0;
};

namespace {

// File access for the MPI-IO driver; metadata is written collectively (rank 0 writes, the
// others send their share), which scales better than every rank writing its own.
unique_hid mpio_fapl([[maybe_unused]] MPI_Comm comm) {
  unique_hid fapl = checked_hid(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate(H5P_FILE_ACCESS)");
#ifdef H5_HAVE_PARALLEL
  CHECK_HDF5(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL));
  CHECK_HDF5(H5Pset_coll_metadata_write(fapl.get(), true));
#else
  TESSERA_THROW(InternalError, "collective HDF5 I/O requested from a serial HDF5 library");
#endif
  return fapl;
}

// Clear messages for the usual mistakes, before MPI-IO sees the path (run on rank 0).
void check_readable(const std::string& path) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (!fs::exists(st))
    TESSERA_THROW(IoError, "cannot open '{}': no such file", path);
  if (fs::is_directory(st))
    TESSERA_THROW(InputError, "cannot open '{}': it is a directory, not an HDF5 file", path);
  if (::access(path.c_str(), R_OK) != 0)
    TESSERA_THROW(IoError, "cannot open '{}': {}", path, std::strerror(errno));
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 < 0)
    TESSERA_THROW(IoError, "cannot open '{}': {}", path, detail::take_hdf5_error());
  if (is_hdf5 == 0)
    TESSERA_THROW(InputError, "'{}' is not an HDF5 file", path);
}

void check_creatable(const std::string& final_path) {
  fs::path dir = fs::path(final_path).parent_path();
  if (dir.empty())
    dir = ".";
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (!fs::exists(st))
    TESSERA_THROW(IoError, "cannot create '{}': directory '{}' does not exist", final_path,
                  dir.string());
  if (!fs::is_directory(st))
    TESSERA_THROW(IoError, "cannot create '{}': '{}' is not a directory", final_path, dir.string());
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    TESSERA_THROW(IoError, "cannot create '{}': directory '{}' is not writable ({})", final_path,
                  dir.string(), std::strerror(errno));
  if (fs::is_directory(fs::status(final_path, ec)))
    TESSERA_THROW(IoError, "cannot create '{}': a directory of that name exists", final_path);
}

void remove_quietly(const std::string& path) noexcept {
  if (std::remove(path.c_str()) != 0 && errno != ENOENT)
    log::warn("could not remove '{}': {}", path, std::strerror(errno));
}

} // namespace

H5File H5File::open_read(const std::string& path, MPI_Comm comm) {
  detail::ensure_hdf5_ready();
  const detail::IoMode mode = detail::choose_io_mode(comm);
  detail::on_root(comm, [&] { check_readable(path); });

  H5File f;
  f.s_ = new State;
  f.s_->comm = comm;
  f.s_->rank = mpi::comm_rank(comm);
  f.s_->path = f.s_->disk_path = path;
  f.s_->parallel = mode == detail::IoMode::Collective;
  f.s_->uncaught = std::uncaught_exceptions();
  if (f.s_->parallel) {
    mpi::collectively(comm, [&] {
      const unique_hid fapl = mpio_fapl(comm);
      const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get());
      if (id < 0)
        TESSERA_THROW(IoError, "cannot open '{}': {}", path, detail::take_hdf5_error());
      f.s_->file.reset(id);
    });
  }
  return f;
}

H5File H5File::create(const std::string& final_path, MPI_Comm comm) {
  detail::ensure_hdf5_ready();
  const detail::IoMode mode = detail::choose_io_mode(comm);
  detail::on_root(comm, [&] { check_creatable(final_path); });

  H5File f;
  f.s_ = new State;
  f.s_->comm = comm;
  f.s_->rank = mpi::comm_rank(comm);
  f.s_->path = final_path;
  f.s_->disk_path = final_path + ".partial";
  f.s_->writable = true;
  f.s_->parallel = mode == detail::IoMode::Collective;
  f.s_->uncaught = std::uncaught_exceptions();
  const std::string& partial = f.s_->disk_path;
  if (f.s_->parallel) {
    mpi::collectively(comm, [&] {
      const unique_hid fapl = mpio_fapl(comm);
      const hid_t id = H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
      if (id < 0)
        TESSERA_THROW(IoError, "cannot create '{}': {}", partial, detail::take_hdf5_error());
      f.s_->file.reset(id);
    });
  } else {
    detail::on_root(comm, [&] {
      const hid_t id = H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
      if (id < 0)
        TESSERA_THROW(IoError, "cannot create '{}': {}", partial, detail::take_hdf5_error());
      CHECK_HDF5(H5Fclose(id));
    });
  }
  return f;
}

H5File::H5File(H5File&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}

H5File& H5File::operator=(H5File&& o) noexcept {
  if (this != &o) {
    release();
    s_ = std::exchange(o.s_, nullptr);
  }
  return *this;
}

H5File::~H5File() {
  release();
}

void H5File::release() noexcept {
  if (!s_)
    return;
  const bool unwinding = std::uncaught_exceptions() > s_->uncaught;
  if (s_->file) {
    if (unwinding)
      (void)s_->file.release(); // left for HDF5 to close at MPI_Finalize (see the header)
    else
      s_->file.reset();
  }
  if (s_->writable && !s_->committed && !s_->removed && (unwinding || s_->rank == 0))
    remove_quietly(s_->disk_path);
  delete s_;
  s_ = nullptr;
}

void H5File::commit() {
  if (!s_ || !s_->writable || s_->committed || s_->closed)
    TESSERA_THROW(InternalError, "commit() of '{}', which is not an open output file",
                  s_ ? s_->path : std::string("(moved-from file)"));
  // Everything else reaches the file before the attribute that says it is complete.
  detail::change_metadata(*this, [](hid_t file) {
    CHECK_HDF5(H5Fflush(file, H5F_SCOPE_GLOBAL));
    detail::put_attribute(file, "complete", 1LL);
  });
  if (s_->file) {
    mpi::collectively(s_->comm, [&] {
      if (H5Fclose(s_->file.release()) < 0)
        TESSERA_THROW(IoError, "closing '{}' failed: {}", s_->disk_path, detail::take_hdf5_error());
    });
  }
  s_->closed = true;
  detail::on_root(s_->comm, [&] {
    if (std::rename(s_->disk_path.c_str(), s_->path.c_str()) != 0)
      TESSERA_THROW(IoError, "cannot rename '{}' to '{}': {}", s_->disk_path, s_->path,
                    std::strerror(errno));
  });
  s_->committed = true;
  s_->disk_path = s_->path;
}

void H5File::close() {
  if (!s_ || s_->closed)
    return;
  if (s_->file) {
    mpi::collectively(s_->comm, [&] {
      if (H5Fclose(s_->file.release()) < 0)
        TESSERA_THROW(IoError, "closing '{}' failed: {}", s_->disk_path, detail::take_hdf5_error());
    });
  }
  s_->closed = true;
  if (s_->writable && !s_->committed) {
    if (s_->rank == 0)
      remove_quietly(s_->disk_path);
    s_->removed = true;
  }
}

hid_t H5File::id() const noexcept {
  return s_ ? s_->file.get() : H5I_INVALID_HID;
}
MPI_Comm H5File::comm() const noexcept {
  return s_ ? s_->comm : MPI_COMM_NULL;
}
const std::string& H5File::path() const noexcept {
  static const std::string none;
  return s_ ? s_->path : none;
}
const std::string& H5File::disk_path() const noexcept {
  static const std::string none;
  return s_ ? s_->disk_path : none;
}
bool H5File::writable() const noexcept {
  return s_ && s_->writable;
}
bool H5File::parallel() const noexcept {
  return s_ && s_->parallel;
}

} // namespace tessera::io
