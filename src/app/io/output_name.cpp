// Checks on an output's name before anything is created: what it is now (a regular file or
// absent), where its links lead, its directory, and the lengths the file system and Open MPI's
// MPI-IO take (see output_name.hpp).
#include "io/output_name.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include <mpi.h>

#include "core/throw.hpp"
#include "io/output_claim.hpp"

namespace tessera::io::detail {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxLinks = 40; // as the kernel's ELOOP limit

int decimal_digits(int n) {
  int d = 1;
  for (; n >= 10; n /= 10)
    ++d;
  return d;
}

} // namespace

// "a character device" for what lstat() found at a name tessera must not replace; nullptr for
// a regular file.
const char* non_regular_kind(mode_t m) {
  if (S_ISREG(m))
    return nullptr;
  if (S_ISDIR(m))
    return "a directory";
  if (S_ISCHR(m))
    return "a character device";
  if (S_ISBLK(m))
    return "a block device";
  if (S_ISFIFO(m))
    return "a FIFO (named pipe)";
  if (S_ISSOCK(m))
    return "a socket";
  return "not a regular file";
}

// Throws when `path` exists and is not a regular file; `name` is the output as given.
void require_regular_or_absent(const std::string& name, const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    return; // absent (or unreachable: creating the temporary will say why)
  if (const char* kind = non_regular_kind(st.st_mode)) {
    const std::string where = path == name ? "" : " (where the link '" + name + "' points)";
    TESSERA_THROW(IoError,
                  "cannot write '{}': '{}'{} is {}, not a regular file; tessera writes outputs "
                  "as regular files only",
                  name, path, where, kind);
  }
}

// The name with symbolic links of its last component followed (a dangling link gives the path
// it points to, which is then created).
std::string follow_links(const std::string& name) {
  std::string p = name;
  for (int hops = 0; hops < kMaxLinks; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
      return p;
    std::error_code ec;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec)
      TESSERA_THROW(IoError, "cannot write '{}': cannot read the symbolic link '{}': {}", name, p,
                    ec.message());
    p = to.is_absolute() ? to.string() : (fs::path(p).parent_path() / to).string();
  }
  TESSERA_THROW(IoError, "cannot write '{}': too many levels of symbolic links", name);
}

void check_directory(const std::string& name, const std::string& target) {
  fs::path dir = fs::path(target).parent_path();
  if (dir.empty())
    dir = ".";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT)
      TESSERA_THROW(IoError, "cannot create '{}': directory '{}' does not exist", name,
                    dir.string());
    TESSERA_THROW(IoError, "cannot create '{}': directory '{}': {}", name, dir.string(),
                  std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode))
    TESSERA_THROW(IoError, "cannot create '{}': '{}' is not a directory", name, dir.string());
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    TESSERA_THROW(IoError, "cannot create '{}': directory '{}' is not writable ({})", name,
                  dir.string(), std::strerror(errno));
}

// Components longer than the file system takes, and paths longer than PATH_MAX, fail in every
// system call with ENAMETOOLONG; say so up front, counting what tessera adds to the name.
void check_lengths(const std::string& name, const std::string& target) {
  const fs::path t(target);
  if (t.filename().empty())
    TESSERA_THROW(InputError, "cannot create '{}': it names a directory, not a file", name);
  for (const auto& part : t.parent_path()) {
    if (part.string().size() > NAME_MAX)
      TESSERA_THROW(InputError,
                    "cannot create '{}': the directory name '{}...' has {} characters, more "
                    "than the {} a file system allows",
                    name, part.string().substr(0, 32), part.string().size(), NAME_MAX);
  }
  fs::path dir = t.parent_path();
  if (dir.empty())
    dir = ".";
  long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name_max <= 0)
    name_max = NAME_MAX;
  const std::size_t base = t.filename().string().size();
  const std::size_t allowed = static_cast<std::size_t>(name_max) - kTemporarySuffixLength;
  if (base > allowed)
    TESSERA_THROW(InputError,
                  "cannot create '{}': its file name has {} characters; at most {} fit here (the "
                  "file system allows {}, and the file is written as NAME.XXXXXX.partial first)",
                  name, base, allowed, name_max);
  if (target.size() + kTemporarySuffixLength >= PATH_MAX)
    TESSERA_THROW(InputError,
                  "cannot create '{}': the path has {} characters; at most {} fit (PATH_MAX is "
                  "{}, and the file is written as NAME.XXXXXX.partial first)",
                  name, target.size(), PATH_MAX - 1 - kTemporarySuffixLength, PATH_MAX);
}
void check_mpiio_name([[maybe_unused]] const std::string& path, [[maybe_unused]] int nranks,
                      [[maybe_unused]] const std::string& what) {
#ifdef OMPI_MAJOR_VERSION
  // Open MPI's ompio, when it opens a file, formats "PATH.locktest.RANK" into a char[256]
  // (sharedfp/lockedfile: longer paths abort the process, "buffer overflow detected"), and
  // creates "BASENAME_cid-CID-PID.sm" in its session directory (sharedfp/sm: the name must be a
  // valid file name). CID has at most 5 digits in practice, a PID at most 7.
  const std::size_t max_path =
      256 - 1 - std::strlen(".locktest.") - static_cast<std::size_t>(decimal_digits(nranks - 1));
  const std::size_t max_base = NAME_MAX - (std::strlen("_cid--.sm") + 5 + 7);
  const std::size_t base = fs::path(path).filename().string().size();
  if (path.size() > max_path || base > max_base)
    TESSERA_THROW(InputError,
                  "{}: Open MPI's MPI-IO opens paths of at most {} characters (file names of at "
                  "most {}) at {} ranks, and '{}' has {} ({}); use a shorter name or directory, or "
                  "set TESSERA_HDF5_IO=serial",
                  what, max_path, max_base, nranks, path, path.size(), base);
#endif
}

} // namespace tessera::io::detail
