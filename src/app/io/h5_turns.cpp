// Mode choice and turn taking for the serial HDF5 path (see h5_turns.hpp).
#include "io/h5_turns.hpp"

#include <hdf5.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "core/throw.hpp"
#include "io/h5_error.hpp"
#include "mpi/agreement.hpp"
#include "mpi/collectives.hpp"
#include "mpi/communicator.hpp"

namespace tessera::io::detail {

namespace {
// Point-to-point tag of the turn token: the other messages on a file's communicator are
// collectives, which never match a tagged receive.
constexpr int turn_tag = 0x7e55;
// How long a rank whose collective transfer failed waits for the others (collective_transfer).
constexpr double kDefaultCollectiveTimeout = 60;
} // namespace

IoMode choose_io_mode(MPI_Comm comm) {
  long long mode = 0; // 0 collective, 1 serial, -1 bad value
  std::string value;
  if (mpi::comm_rank(comm) == 0) {
    value = settings::raw(settings::Setting::Hdf5Io).value_or("");
#ifdef H5_HAVE_PARALLEL
    const bool parallel = true;
#else
    const bool parallel = false;
#endif
    if (value == "serial")
      mode = 1;
    else if (value.empty() || value == "auto")
      mode = parallel ? 0 : 1;
    else if (value == "parallel") {
      mode = parallel ? 0 : 1;
      if (!parallel)
        log::warn("TESSERA_HDF5_IO=parallel, but this HDF5 library is serial: the ranks "
                  "write in turn");
    } else
      mode = -1;
  }
  mpi::broadcast(comm, mode);
  if (mode < 0) {
    mpi::broadcast(comm, value);
    TESSERA_THROW(InputError, "TESSERA_HDF5_IO must be 'serial', 'parallel' or 'auto', not '{}'",
                  value);
  }
  return mode == 0 ? IoMode::Collective : IoMode::Serial;
}

void take_turns(MPI_Comm comm, const std::function<void()>& turn) {
  int ok = mpi::receive_token(comm, turn_tag, 1);
  std::exception_ptr error;
  if (ok) {
    try {
      turn();
    } catch (...) {
      error = std::current_exception();
      ok = 0;
    }
  }
  mpi::pass_token(comm, turn_tag, ok);
  mpi::agree(comm, error);
}

void on_root(MPI_Comm comm, const std::function<void()>& step) {
  mpi::collectively(comm, [&] {
    if (mpi::comm_rank(comm) == 0)
      step();
  });
}

unique_hid open_file_alone(const std::string& path, bool write) {
  const hid_t id = H5Fopen(path.c_str(), write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0)
    TESSERA_THROW(IoError, "cannot open '{}' for {}: {}", path, write ? "writing" : "reading",
                  take_hdf5_error());
  return unique_hid(id);
}

void collective_transfer(const H5File& f, const std::function<void()>& fn) {
  const double seconds =
      settings::number(settings::Setting::CollectiveTimeout, kDefaultCollectiveTimeout);
  const std::string temporary = f.writable() ? f.disk_path() : std::string();
  // HDF5's message names the call that failed, not the file.
  const auto named = [&] {
    try {
      fn();
    } catch (const IoError& e) {
      TESSERA_THROW(IoError, "{} '{}': {}", f.writable() ? "writing" : "reading", f.path(),
                    e.what());
    }
  };
  mpi::collectively_or_abort(f.comm(), seconds, named, [&] {
    if (!temporary.empty())
      std::remove(temporary.c_str());
  });
}

void change_metadata(H5File& f, const std::function<void(hid_t file)>& fn) {
  if (f.parallel()) {
    // HDF5 may write metadata collectively during any metadata call (cache evictions).
    f.reserve_space();
    mpi::collectively(f.comm(), [&] { fn(f.id()); });
    return;
  }
  on_root(f.comm(), [&] {
    f.reserve_in_turn();
    unique_hid file = open_file_alone(f.disk_path(), true);
    fn(file.get());
    // Closing flushes; a failure here is a failed write, so it must not be swallowed.
    CHECK_HDF5(H5Fclose(file.release()));
  });
}

void read_metadata(const H5File& f, const std::function<void(hid_t file)>& fn) {
  mpi::collectively(f.comm(), [&] {
    if (f.parallel()) {
      fn(f.id());
    } else {
      unique_hid file = open_file_alone(f.disk_path(), false);
      fn(file.get());
    }
  });
}

} // namespace tessera::io::detail
