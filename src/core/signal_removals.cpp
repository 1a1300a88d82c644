// The table behind signal_removals.hpp: a slot is free (0), being written (1) or published (2);
// the handler reads published slots only.
#include "core/signal_removals.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>

namespace tessera::signal_removals {

namespace {

constexpr int kSlots = 32;
constexpr std::size_t kPathMax = 4096;

struct Slot {
  std::atomic<int> state{0};
  bool side_files = false;
  char path[kPathMax]{};
};

std::array<Slot, kSlots> g_slots;

static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads the slots");

// Removes the files of `path`'s directory whose names start with its own name and '-', with
// system calls only (opendir and readdir may allocate, which a signal handler must not; glibc's
// getdents64 is the bare system call).
void remove_side_files(const char* path) noexcept {
  const char* slash = std::strrchr(path, '/');
  const char* name = slash ? slash + 1 : path;
  const std::size_t name_len = std::strlen(name);
  char dir[kPathMax] = ".";
  if (slash == path) {
    std::memcpy(dir, "/", 2);
  } else if (slash) {
    const auto n = static_cast<std::size_t>(slash - path);
    std::memcpy(dir, path, n);
    dir[n] = '\0';
  }
  const int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  alignas(8) char buf[4096];
  for (;;) {
    const ssize_t n = ::getdents64(fd, buf, sizeof buf);
    if (n <= 0)
      break;
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const struct dirent64*>(buf + at);
      at += e->d_reclen;
      if (std::strncmp(e->d_name, name, name_len) == 0 && e->d_name[name_len] == '-')
        ::unlinkat(fd, e->d_name, 0);
    }
  }
  ::close(fd);
}

} // namespace

int remember(const std::string& path, bool with_side_files) noexcept {
  if (path.empty() || path.size() >= kPathMax)
    return -1;
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[static_cast<std::size_t>(i)];
    int expected = 0;
    if (!s.state.compare_exchange_strong(expected, 1))
      continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.side_files = with_side_files;
    s.state.store(2);
    return i;
  }
  return -1;
}

void forget(int slot) noexcept {
  if (slot >= 0 && slot < kSlots)
    g_slots[static_cast<std::size_t>(slot)].state.store(0);
}

int remove_all() noexcept {
  int removed = 0;
  for (Slot& s : g_slots) {
    if (s.state.load() != 2)
      continue;
    if (::unlink(s.path) == 0)
      ++removed;
    if (s.side_files)
      remove_side_files(s.path);
  }
  return removed;
}

} // namespace tessera::signal_removals
