// Output ownership: the NAME.lock flock, the unique temporary, space reservation and the final
// rename (see output_claim.hpp; the name checks are in output_name.cpp).
#include "io/output_claim.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>

#include "core/log.hpp"
#include "core/signal_removals.hpp"
#include "core/throw.hpp"

namespace tessera::io::detail {

namespace fs = std::filesystem;

namespace {

constexpr const char* kTemporaryEnd = ".partial";
constexpr std::size_t kTagLength = 6; // the XXXXXX
constexpr const char* kLockEnd = ".lock";

std::string errno_text(int e) {
  return std::strerror(e);
}

std::string host_name() {
  char h[256] = {};
  if (::gethostname(h, sizeof h - 1) != 0)
    return "unknown";
  return h;
}

std::string read_owner(int fd) {
  char buf[320] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

[[noreturn]] void throw_held(const std::string& name, const std::string& lock_path,
                             const std::string& owner) {
  long pid = 0;
  char host[256] = {};
  if (std::sscanf(owner.c_str(), "%ld %255s", &pid, host) == 2 && pid == ::getpid() &&
      host_name() == host)
    TESSERA_THROW(IoError,
                  "cannot create '{}': this run is already writing it (an output cannot also be "
                  "another output or checkpoint of the same run)",
                  name);
  const std::string who = owner.empty() ? std::string("another job")
                                        : fmt::format("another job (process {} on host {})",
                                                      pid ? std::to_string(pid) : owner, host);
  TESSERA_THROW(IoError,
                "cannot create '{}': {} is writing it (it holds the lock '{}'); wait until it "
                "has finished, or choose another output name",
                name, who, lock_path);
}

bool locks_unsupported(int e) {
  return e == ENOLCK || e == ENOSYS || e == EOPNOTSUPP || e == EINVAL;
}

// An exclusive flock() on lock_path; -1 (after a warning) where the file system has no locks.
int take_lock(const std::string& name, const std::string& lock_path) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    bool created = true;
    int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0 && errno == EEXIST) {
      created = false;
      fd = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0 && errno == ENOENT)
        continue; // removed by its holder in between
    }
    if (fd < 0) {
      const int e = errno;
      struct stat st {};
      if (::lstat(lock_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        TESSERA_THROW(IoError, "cannot create '{}': its lock file '{}' is {}, not a regular file",
                      name, lock_path,
                      S_ISLNK(st.st_mode) ? "a symbolic link" : non_regular_kind(st.st_mode));
      TESSERA_THROW(IoError, "cannot create '{}': cannot open its lock file '{}': {}", name,
                    lock_path, errno_text(e));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      if (e == EWOULDBLOCK) {
        const std::string owner = read_owner(fd);
        ::close(fd);
        throw_held(name, lock_path, owner);
      }
      ::close(fd);
      if (created)
        ::unlink(lock_path.c_str());
      if (locks_unsupported(e)) {
        log::warn("cannot lock '{}' ({}): the file system has no file locks, so another job "
                  "writing '{}' at the same time would go unnoticed",
                  lock_path, errno_text(e), name);
        return -1;
      }
      TESSERA_THROW(IoError, "cannot create '{}': cannot lock '{}': {}", name, lock_path,
                    errno_text(e));
    }
    // The previous holder removes the file before letting go of its lock: if the name now
    // points elsewhere, this lock guards nothing; start again.
    struct stat mine {
    }, named{};
    if (::fstat(fd, &mine) == 0 && ::stat(lock_path.c_str(), &named) == 0 &&
        mine.st_dev == named.st_dev && mine.st_ino == named.st_ino) {
      const std::string owner = fmt::format("{} {}\n", static_cast<long>(::getpid()), host_name());
      if (::ftruncate(fd, 0) == 0)
        (void)!::pwrite(fd, owner.data(), owner.size(), 0);
      return fd;
    }
    ::close(fd);
  }
  TESSERA_THROW(IoError, "cannot create '{}': its lock file '{}' keeps being replaced", name,
                lock_path);
}

std::string random_tag() {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 gen{(std::uint64_t{std::random_device{}()} << 32) ^
                                   static_cast<std::uint64_t>(::getpid())};
  std::uniform_int_distribution<std::size_t> pick(0, sizeof kChars - 2);
  std::string s(kTagLength, 'X');
  for (char& c : s)
    c = kChars[pick(gen)];
  return s;
}

bool is_temporary_of(const std::string& file, const std::string& base) {
  const std::string end = kTemporaryEnd;
  if (file.size() != base.size() + 1 + kTagLength + end.size() ||
      file.compare(0, base.size(), base) != 0 || file[base.size()] != '.' ||
      file.compare(file.size() - end.size(), end.size(), end) != 0)
    return false;
  for (std::size_t i = 0; i < kTagLength; ++i)
    if (!std::isalnum(static_cast<unsigned char>(file[base.size() + 1 + i])))
      return false;
  return true;
}

// With the lock held nobody else writes `target`: temporaries of it are remainders of runs that
// were killed.
void remove_leftovers(const std::string& target) {
  const fs::path t(target);
  const fs::path dir = t.parent_path().empty() ? fs::path(".") : t.parent_path();
  const std::string base = t.filename().string();
  std::error_code ec;
  for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (!is_temporary_of(file, base) || !it->is_regular_file(ec))
      continue;
    std::error_code rm;
    if (fs::remove(it->path(), rm))
      log::info("removed '{}', left behind by an earlier run that did not finish",
                it->path().string());
  }
}

int create_temporary(const std::string& name, const std::string& target, std::string& path) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    path = target + "." + random_tag() + kTemporaryEnd;
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd >= 0)
      return fd;
    if (errno != EEXIST)
      TESSERA_THROW(IoError, "cannot create '{}' (for '{}'): {}", path, name, errno_text(errno));
  }
  TESSERA_THROW(IoError, "cannot create a temporary for '{}': every name tried exists", name);
}

// What a new output must find room for before HDF5 creates it.
constexpr std::uint64_t kFirstRoom = std::uint64_t{1} << 20;

// Makes the file `bytes` long with its blocks allocated. False where the file system cannot
// (EOPNOTSUPP: NFS before 4.2, older Lustre): nothing is reserved there. IoError naming the
// output when the disk is full (ENOSPC) or the file may not grow (EFBIG).
bool allocate(int fd, std::uint64_t bytes, const std::string& path, const std::string& name) {
  int rc = 0;
  do {
    rc = ::fallocate(fd, 0, 0, static_cast<off_t>(bytes));
  } while (rc != 0 && errno == EINTR);
  if (rc == 0)
    return true;
  const int e = errno;
  if (e == EOPNOTSUPP || e == ENOSYS || e == EINVAL)
    return false;
  TESSERA_THROW(IoError, "cannot write '{}': {} (reserving {:.1f} MiB for '{}')", name,
                errno_text(e), static_cast<double>(bytes) / 1048576.0, path);
}

} // namespace

OutputClaim OutputClaim::take(const std::string& name, bool mpiio, int nranks) {
  OutputClaim c;
  c.name_ = name;
  if (name.empty())
    TESSERA_THROW(InputError, "the output file name is empty");
  check_lengths(name, name);
  c.target_ = follow_links(name);
  if (c.target_ != name)
    check_lengths(name, c.target_);
  check_directory(name, c.target_);
  require_regular_or_absent(name, c.target_);
  if (mpiio) {
    const std::string example = c.target_ + ".XXXXXX" + kTemporaryEnd;
    check_mpiio_name(
        example, nranks,
        fmt::format("cannot create '{}' (written as '{}' until complete)", name, example));
  }
  c.lock_path_ = c.target_ + kLockEnd;
  c.lock_fd_ = take_lock(name, c.lock_path_);
  if (c.lock_fd_ >= 0) {
    c.lock_slot_ = signal_removals::remember(c.lock_path_);
    remove_leftovers(c.target_);
  }
  c.temp_fd_ = create_temporary(name, c.target_, c.temporary_);
  c.temp_slot_ = signal_removals::remember(c.temporary_, true);
  // Room for the file's first metadata, found now rather than inside HDF5 (which truncates the
  // file when it creates it, so the probe is given back at once).
  if (allocate(c.temp_fd_, kFirstRoom, c.temporary_, name))
    (void)::ftruncate(c.temp_fd_, 0);
  return c;
}

OutputClaim::OutputClaim(OutputClaim&& o) noexcept
    : name_(std::move(o.name_)), target_(std::move(o.target_)), temporary_(std::move(o.temporary_)),
      lock_path_(std::move(o.lock_path_)), lock_fd_(std::exchange(o.lock_fd_, -1)),
      temp_fd_(std::exchange(o.temp_fd_, -1)), temp_slot_(std::exchange(o.temp_slot_, -1)),
      lock_slot_(std::exchange(o.lock_slot_, -1)), reserved_(o.reserved_),
      committed_(std::exchange(o.committed_, true)), sidecars_(std::exchange(o.sidecars_, {})) {
  o.temporary_.clear();
}

OutputClaim& OutputClaim::operator=(OutputClaim&& o) noexcept {
  if (this != &o) {
    abandon();
    name_ = std::move(o.name_);
    target_ = std::move(o.target_);
    temporary_ = std::move(o.temporary_);
    lock_path_ = std::move(o.lock_path_);
    lock_fd_ = std::exchange(o.lock_fd_, -1);
    temp_fd_ = std::exchange(o.temp_fd_, -1);
    temp_slot_ = std::exchange(o.temp_slot_, -1);
    lock_slot_ = std::exchange(o.lock_slot_, -1);
    reserved_ = o.reserved_;
    committed_ = std::exchange(o.committed_, true);
    sidecars_ = std::exchange(o.sidecars_, {});
    o.temporary_.clear();
  }
  return *this;
}

OutputClaim::~OutputClaim() {
  abandon();
}

void OutputClaim::reserve(std::uint64_t bytes) {
  if (temp_fd_ < 0 || bytes <= reserved_)
    return;
  reserved_ = allocate(temp_fd_, bytes, temporary_, name_) ? bytes : UINT64_MAX;
}

void reserve_file(const std::string& path, std::uint64_t bytes, const std::string& name) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    TESSERA_THROW(IoError, "cannot write '{}': cannot open '{}': {}", name, path,
                  errno_text(errno));
  try {
    (void)allocate(fd, bytes, path, name);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

void OutputClaim::check_sidecar(const std::string& suffix) const {
  check_lengths(name_ + suffix, target_ + suffix);
  require_regular_or_absent(name_ + suffix, target_ + suffix);
}

void OutputClaim::add_sidecar(const std::string& suffix, const std::string& contents) {
  Sidecar s{target_ + suffix, {}};
  require_regular_or_absent(name_ + suffix, s.target);
  if (lock_fd_ >= 0)
    remove_leftovers(s.target);
  const int fd = create_temporary(name_ + suffix, s.target, s.temporary);
  s.removal_slot = signal_removals::remember(s.temporary);
  sidecars_.push_back(s); // from here on abandon() removes it
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      TESSERA_THROW(IoError, "cannot write '{}': {}", s.temporary, errno_text(e));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0)
    TESSERA_THROW(IoError, "cannot write '{}': {}", s.temporary, errno_text(errno));
}

void OutputClaim::commit() {
  require_regular_or_absent(name_, target_);
  for (const Sidecar& s : sidecars_) {
    require_regular_or_absent(s.target, s.target);
    // An old sidecar would describe the new file until its own rename: it goes first.
    if (::unlink(s.target.c_str()) != 0 && errno != ENOENT)
      TESSERA_THROW(IoError, "cannot replace '{}': {}", s.target, errno_text(errno));
  }
  signal_removals::forget(std::exchange(temp_slot_, -1)); // a signal now leaves NAME complete
  if (std::rename(temporary_.c_str(), target_.c_str()) != 0)
    TESSERA_THROW(IoError, "cannot rename '{}' to '{}': {}", temporary_, target_,
                  errno_text(errno));
  committed_ = true;
  if (temp_fd_ >= 0)
    ::close(std::exchange(temp_fd_, -1));
  for (const Sidecar& s : sidecars_) {
    signal_removals::forget(s.removal_slot);
    // The output is complete and in place; a missing sidecar only costs the viewers.
    if (std::rename(s.temporary.c_str(), s.target.c_str()) != 0) {
      log::warn("'{}' is complete, but its sidecar could not be renamed from '{}' to '{}': {}",
                target_, s.temporary, s.target, errno_text(errno));
      ::unlink(s.temporary.c_str());
    }
  }
  sidecars_.clear();
  release_lock();
}

void OutputClaim::abandon() noexcept {
  if (temp_fd_ >= 0)
    ::close(std::exchange(temp_fd_, -1));
  signal_removals::forget(std::exchange(temp_slot_, -1));
  if (!committed_ && !temporary_.empty() && ::unlink(temporary_.c_str()) != 0 && errno != ENOENT)
    log::warn("could not remove '{}': {}", temporary_, errno_text(errno));
  temporary_.clear();
  for (const Sidecar& s : sidecars_) {
    signal_removals::forget(s.removal_slot);
    if (::unlink(s.temporary.c_str()) != 0 && errno != ENOENT)
      log::warn("could not remove '{}': {}", s.temporary, errno_text(errno));
  }
  sidecars_.clear();
  release_lock();
}

void OutputClaim::discard_contents() noexcept {
  if (committed_ || temp_fd_ < 0)
    return;
  (void)::ftruncate(temp_fd_, 0);
  if (reserved_ != UINT64_MAX)
    reserved_ = 0;
}

void OutputClaim::release_lock() noexcept {
  signal_removals::forget(std::exchange(lock_slot_, -1));
  if (lock_fd_ < 0)
    return;
  // Removed while still locked: a job waiting for the lock then sees the name gone (or new)
  // and starts again on the new file (take_lock).
  ::unlink(lock_path_.c_str());
  ::close(std::exchange(lock_fd_, -1));
}

} // namespace tessera::io::detail
