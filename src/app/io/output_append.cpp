// Appending to an output: the existing file is copied into the writer's temporary, which is
// then opened and added to, and renamed over the original by commit() as any output is.
//
// Why a copy rather than writing into the file in place: HDF5 has no transactions. A dataset
// created in place and then written is visible half-written to readers meanwhile, and a run
// that fails or is killed part way leaves the file changed (a half-written dataset, or metadata
// HDF5 never finished flushing, which can make the whole file unreadable). With the copy, the
// original stays untouched, valid and complete until the rename replaces it with a file that
// is complete too; a failed run removes its temporary and leaves the original as it was. The
// price is one read and one write of the existing file (copy_file_range: a reflink where the
// file system has them, else a copy in the kernel).
#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/throw.hpp"
#include "io/output_claim.hpp"

namespace tessera::io::detail {

namespace {

// Copies all of `in` to `out` from offset 0; false with errno set when it fails.
bool copy_all(int in, int out, std::uint64_t size) {
  off_t from = 0, to = 0;
  while (static_cast<std::uint64_t>(from) < size) {
    const ssize_t n =
        copy_file_range(in, &from, out, &to, size - static_cast<std::uint64_t>(from), 0);
    if (n > 0)
      continue;
    if (n == 0)
      break;
    if (errno == EINTR)
      continue;
    if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
      return false;
    // A file system (or kernel) without copy_file_range: plain reads and writes.
    std::vector<char> buf(std::size_t{1} << 20);
    for (;;) {
      const ssize_t r = pread(in, buf.data(), buf.size(), from);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return false;
      if (r == 0)
        return true;
      for (ssize_t done = 0; done < r;) {
        const ssize_t w = pwrite(out, buf.data() + done, static_cast<std::size_t>(r - done), to);
        if (w < 0 && errno == EINTR)
          continue;
        if (w < 0)
          return false;
        done += w;
        to += w;
      }
      from += r;
    }
  }
  return true;
}

} // namespace

std::optional<std::uint64_t> OutputClaim::copy_target() {
  struct stat st {};
  if (::stat(target_.c_str(), &st) != 0)
    return std::nullopt; // nothing to append to: a new file
  if (H5Fis_hdf5(target_.c_str()) <= 0)
    TESSERA_THROW(InputError,
                  "cannot append to '{}': it is not an HDF5 (or netCDF-4) file; choose another "
                  "output, or leave out --mode append to replace it",
                  name_);
  const int in = ::open(target_.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    TESSERA_THROW(IoError, "cannot append to '{}': cannot read it ({})", name_,
                  std::strerror(errno));
  // The file keeps its permissions when the copy replaces it.
  const bool ok = copy_all(in, temp_fd_, static_cast<std::uint64_t>(st.st_size)) &&
                  ::fchmod(temp_fd_, st.st_mode & 07777) == 0;
  const int err = errno;
  ::close(in);
  if (!ok)
    TESSERA_THROW(IoError, "cannot append to '{}': copying it to '{}' failed ({})", name_,
                  temporary_, std::strerror(err));
  return static_cast<std::uint64_t>(st.st_size);
}

} // namespace tessera::io::detail
