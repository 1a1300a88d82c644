// H5File: collective open / create, commit by rename, removal of uncommitted output.
#include "io/h5_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_error.hpp"
#include "io/h5_turns.hpp"
#include "io/output_claim.hpp"
#include "mpi/agreement.hpp"
#include "mpi/collectives.hpp"
#include "mpi/communicator.hpp"

namespace tessera::io {

namespace fs = std::filesystem;

namespace {

// MPI-IO handles of files destroyed while an exception unwound (see ~H5File), in that order.
std::mutex abandoned_mutex;
std::vector<hid_t> abandoned;

void abandon_handle(hid_t id) noexcept {
  try {
    const std::lock_guard<std::mutex> lock(abandoned_mutex);
    abandoned.push_back(id);
  } catch (...) {
    // Out of memory: the handle is left to HDF5's own shutdown.
  }
}

} // namespace

bool close_abandoned_files() noexcept {
  std::vector<hid_t> ids;
  {
    const std::lock_guard<std::mutex> lock(abandoned_mutex);
    ids.swap(abandoned);
  }
  bool closed = true;
  for (const hid_t id : ids) {
    if (H5Iis_valid(id) <= 0)
      continue;
    if (H5Fclose(id) < 0) {
      log::warn("closing an abandoned HDF5 file failed: {}", detail::take_hdf5_error());
      closed = false;
    }
  }
  return closed;
}

namespace {

struct NotedDataset {
  std::vector<hsize_t> dims, chunk;
  std::size_t element_size = 0;
  bool compressed = false;

  // Allocated storage: whole chunks, however full.
  std::uint64_t bytes() const {
    if (compressed)
      return 0;
    std::uint64_t n = element_size;
    for (std::size_t k = 0; k < dims.size(); ++k) {
      const hsize_t c = k < chunk.size() && chunk[k] > 0 ? chunk[k] : 1;
      n *= (dims[k] + c - 1) / c * c;
    }
    return n;
  }
};

} // namespace

struct H5File::State {
  unique_hid file; // open in collective mode only
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  std::string path;
  std::string disk_path;
  std::optional<detail::OutputClaim> claim;     // rank 0 of a writable file: lock and temporary
  std::map<std::string, NotedDataset> datasets; // note_dataset: what reserve_space counts
  std::uint64_t base_bytes = 0;                 // appending: the file copied, counted too
  bool writable = false;
  bool parallel = false;
  bool committed = false;
  bool closed = false;
  bool removed = false; // the temporary of an uncommitted file is gone
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
void check_readable(const std::string& path, bool mpiio, int nranks) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (!fs::exists(st))
    TESSERA_THROW(IoError, "cannot open '{}': no such file", path);
  if (fs::is_directory(st))
    TESSERA_THROW(InputError, "cannot open '{}': it is a directory, not an HDF5 file", path);
  if (::access(path.c_str(), R_OK) != 0)
    TESSERA_THROW(IoError, "cannot open '{}': {}", path, std::strerror(errno));
  if (mpiio)
    detail::check_mpiio_name(path, nranks, fmt::format("cannot open '{}'", path));
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 < 0)
    TESSERA_THROW(IoError, "cannot open '{}': {}", path, detail::take_hdf5_error());
  if (is_hdf5 == 0)
    TESSERA_THROW(InputError, "'{}' is not an HDF5 file", path);
}

void remove_quietly(const std::string& path) noexcept {
  if (!path.empty() && std::remove(path.c_str()) != 0 && errno != ENOENT)
    log::warn("could not remove '{}': {}", path, std::strerror(errno));
}

// Room reserved beyond the datasets' storage, for the metadata (attributes, object headers,
// chunk indexes) and what HDF5 leaves unused between objects; reserve_space() adds 1/32 of the
// storage to it.
constexpr std::uint64_t kReserveSlack = std::uint64_t{1} << 20;

} // namespace

H5File H5File::open_read(const std::string& path, MPI_Comm comm) {
  detail::ensure_hdf5_ready();
  const detail::IoMode mode = detail::choose_io_mode(comm);
  const int nranks = mpi::comm_size(comm);
  detail::on_root(comm, [&] { check_readable(path, mode == detail::IoMode::Collective, nranks); });

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

H5File H5File::create(const std::string& final_path, MPI_Comm comm, Mode open_mode) {
  detail::ensure_hdf5_ready();
  const detail::IoMode mode = detail::choose_io_mode(comm);

  H5File f;
  f.s_ = new State;
  f.s_->comm = comm;
  f.s_->rank = mpi::comm_rank(comm);
  f.s_->path = final_path;
  f.s_->writable = true;
  f.s_->parallel = mode == detail::IoMode::Collective;
  f.s_->uncaught = std::uncaught_exceptions();
  // Rank 0 takes the output (checks, lock, temporary); every rank learns the temporary's name.
  const int nranks = mpi::comm_size(comm);
  std::string temporary;
  long long copied = -1; // appending: the bytes of the existing file; -1: a new file
  detail::on_root(comm, [&] {
    f.s_->claim.emplace(detail::OutputClaim::take(final_path, f.s_->parallel, nranks));
    temporary = f.s_->claim->temporary();
    if (open_mode == Mode::Append)
      if (const auto bytes = f.s_->claim->copy_target())
        copied = static_cast<long long>(*bytes);
  });
  mpi::broadcast(comm, temporary);
  mpi::broadcast(comm, copied);
  f.s_->disk_path = temporary;
  f.s_->base_bytes = copied > 0 ? static_cast<std::uint64_t>(copied) : 0;
  if (f.s_->parallel) {
    mpi::collectively(comm, [&] {
      const unique_hid fapl = mpio_fapl(comm);
      const hid_t id = copied >= 0
                           ? H5Fopen(temporary.c_str(), H5F_ACC_RDWR, fapl.get())
                           : H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
      if (id < 0)
        TESSERA_THROW(IoError, "cannot {} '{}': {}", copied >= 0 ? "open" : "create", temporary,
                      detail::take_hdf5_error());
      f.s_->file.reset(id);
    });
  } else if (copied < 0) {
    detail::on_root(comm, [&] {
      const hid_t id = H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
      if (id < 0)
        TESSERA_THROW(IoError, "cannot create '{}': {}", temporary, detail::take_hdf5_error());
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
  // The close below still flushes metadata: an uncommitted file's room (its contents are
  // discarded) lets it succeed on a full disk.
  if (s_->claim && s_->writable && !s_->committed)
    s_->claim->discard_contents();
  if (s_->file) {
    if (unwinding)
      abandon_handle(s_->file.release()); // closed by close_abandoned_files() (see the header)
    else
      s_->file.reset();
  }
  if (s_->writable && !s_->committed && !s_->removed && (unwinding || s_->rank == 0))
    remove_quietly(s_->disk_path);
  if (s_->claim)
    s_->claim->abandon(); // rank 0: releases the lock
  delete s_;
  s_ = nullptr;
}

// HDF5's own end of allocation is out of reach with the MPI-IO driver (H5Fget_eoa wants a SWMR
// driver, H5Fget_filesize fails after a write): the datasets' storage plus slack for the
// metadata bounds the file's size instead.
std::uint64_t H5File::space_needed(const State& s) {
  std::uint64_t data = 0;
  for (const auto& [name, d] : s.datasets)
    data += d.bytes();
  return s.base_bytes + data + kReserveSlack + data / 32;
}

void H5File::reserve_in_turn() const {
  if (!s_ || s_->parallel || !s_->writable || s_->closed)
    return;
  // Every time: the last close cut the file back to HDF5's end of allocation.
  detail::reserve_file(s_->disk_path, space_needed(*s_), s_->path);
}

void H5File::reserve_space() {
  if (!s_ || !s_->parallel || !s_->writable || !s_->file || s_->closed)
    return;
  const std::uint64_t bytes = space_needed(*s_);
  mpi::collectively(s_->comm, [&] {
    if (s_->claim)
      s_->claim->reserve(bytes);
  });
}

void H5File::commit(Durability durability) {
  if (!s_ || !s_->writable || s_->committed || s_->closed)
    TESSERA_THROW(InternalError, "commit() of '{}', which is not an open output file",
                  s_ ? s_->path : std::string("(moved-from file)"));
  detail::change_metadata(*this, [durability](hid_t file) {
    if (durability == Durability::Synced) // everything else reaches the disk first
      CHECK_HDF5(H5Fflush(file, H5F_SCOPE_GLOBAL));
    detail::put_attribute(file, "complete", 1LL);
  });
  if (s_->file) {
    // A flush cut the file back to HDF5's end of allocation; the close writes a little more.
    if (s_->claim)
      s_->claim->forget_reservation();
    reserve_space();
    mpi::collectively(s_->comm, [&] {
      if (H5Fclose(s_->file.release()) < 0)
        TESSERA_THROW(IoError, "closing '{}' failed: {}", s_->disk_path, detail::take_hdf5_error());
    });
  }
  s_->closed = true;
  detail::on_root(s_->comm, [&] { s_->claim->commit(); });
  s_->committed = true;
  s_->disk_path = s_->path;
}

void H5File::add_sidecar(const std::string& suffix,
                         const std::function<std::string(const std::string& data_file)>& contents) {
  if (!s_ || !s_->writable || s_->committed || s_->closed)
    TESSERA_THROW(InternalError, "add_sidecar() on '{}', which is not an open output file",
                  s_ ? s_->path : std::string("(moved-from file)"));
  detail::on_root(s_->comm, [&] {
    const std::string data_file = fs::path(s_->claim->target()).filename().string();
    s_->claim->add_sidecar(suffix, contents(data_file));
  });
}

void H5File::expect_sidecar(const std::string& suffix) {
  if (!s_ || !s_->writable || s_->committed || s_->closed)
    TESSERA_THROW(InternalError, "expect_sidecar() on '{}', which is not an open output file",
                  s_ ? s_->path : std::string("(moved-from file)"));
  detail::on_root(s_->comm, [&] { s_->claim->check_sidecar(suffix); });
}

void H5File::close() {
  if (!s_ || s_->closed)
    return;
  if (s_->file) {
    if (s_->claim && s_->writable && !s_->committed)
      s_->claim->discard_contents(); // room for the metadata the close flushes (see release())
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
    if (s_->claim)
      s_->claim->abandon();
  }
}

void H5File::note_dataset(const std::string& path, std::vector<hsize_t> dims,
                          std::vector<hsize_t> chunk, std::size_t element_size, bool compressed) {
  if (s_)
    s_->datasets[path] = {std::move(dims), std::move(chunk), element_size, compressed};
}

void H5File::note_extent(const std::string& path, const std::vector<hsize_t>& dims) {
  if (!s_)
    return;
  if (const auto it = s_->datasets.find(path); it != s_->datasets.end())
    it->second.dims = dims;
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
