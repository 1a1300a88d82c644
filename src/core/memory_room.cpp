// memory_room(): cgroup v2 and v1 limits, /proc/meminfo and RLIMIT_AS, each optional.
#include "core/memory_room.hpp"

#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace tessera {

namespace {

namespace fs = std::filesystem;

constexpr double kNone = std::numeric_limits<double>::infinity();

// The first number in `file` (a cgroup value or "max"); kNone when absent or "max".
double read_value(const fs::path& file) {
  std::ifstream in(file);
  std::string word;
  if (!(in >> word) || word == "max")
    return kNone;
  try {
    const double v = std::stod(word);
    return v >= 9.0e18 ? kNone : v; // cgroup v1 writes "no limit" as a huge page-rounded number
  } catch (...) {
    return kNone;
  }
}

// The value of `key` ("inactive_file") in a memory.stat file; 0 when absent.
double read_stat(const fs::path& file, const std::string& key) {
  std::ifstream in(file);
  std::string k;
  double v = 0;
  while (in >> k >> v)
    if (k == key)
      return v;
  return 0;
}

// kB value of `key` ("MemAvailable:") in a /proc file such as /proc/meminfo; kNone when absent.
double read_kib(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      std::istringstream s(line.substr(key.size()));
      double kib = 0;
      if (s >> kib)
        return kib * 1024.0;
    }
  return kNone;
}

struct Controller {
  fs::path mount;   // where its hierarchy is mounted
  std::string path; // this process's cgroup in it, from /proc/self/cgroup
  const char *limit, *usage, *inactive;
};

// The memory controller of this process: cgroup v2 ("0::/path") or v1 ("N:…memory…:/path").
bool find_controller(Controller& c) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  bool found = false;
  while (std::getline(in, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos)
      continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    std::istringstream list(controllers);
    bool memory = false;
    for (std::string name; std::getline(list, name, ',');)
      memory = memory || name == "memory";
    if (memory) { // v1 wins where both are listed: the limit is set there
      c = {"/sys/fs/cgroup/memory", path, "memory.limit_in_bytes", "memory.usage_in_bytes",
           "total_inactive_file"};
      return true;
    }
    if (controllers.empty() && line.rfind("0:", 0) == 0) {
      const fs::path mount = fs::exists("/sys/fs/cgroup/cgroup.controllers")
                                 ? fs::path("/sys/fs/cgroup")
                                 : fs::path("/sys/fs/cgroup/unified");
      c = {mount, path, "memory.max", "memory.current", "inactive_file"};
      found = true;
    }
  }
  return found;
}

// The least room under the limits of the cgroup and of those above it.
double cgroup_room(std::string& source) {
  Controller c;
  std::error_code ec;
  if (!find_controller(c))
    return kNone;
  fs::path dir = c.mount / fs::path(c.path).relative_path();
  if (!fs::is_directory(dir, ec)) // a cgroup namespace: the mount is this process's cgroup
    dir = c.mount;
  double room = kNone;
  for (;;) {
    const double limit = read_value(dir / c.limit);
    if (limit != kNone) {
      const double usage = read_value(dir / c.usage);
      const double cache = read_stat(dir / "memory.stat", c.inactive);
      const double here = usage == kNone ? limit : limit - usage + cache;
      if (here < room) {
        room = here;
        source = "the memory limit of cgroup " + (dir / c.limit).string();
      }
    }
    if (dir == c.mount || !dir.has_parent_path() || dir.parent_path() == dir)
      break;
    dir = dir.parent_path();
  }
  return room;
}

} // namespace

MemoryRoom memory_room() {
  MemoryRoom r{kNone, "", kNone};
  try {
    r.node_bytes = cgroup_room(r.node_source);
    const double available = read_kib("/proc/meminfo", "MemAvailable:");
    if (available < r.node_bytes) {
      r.node_bytes = available;
      r.node_source = "MemAvailable in /proc/meminfo";
    }
    rlimit as{};
    if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
      const double used = read_kib("/proc/self/status", "VmSize:");
      r.process_bytes = double(as.rlim_cur) - (used == kNone ? 0.0 : used);
    }
  } catch (...) {
    // Unreadable limits are unknown ones.
  }
  return r;
}

} // namespace tessera
