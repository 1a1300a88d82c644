// How much more memory this process may take before the kernel refuses it (RLIMIT_AS) or kills
// it (the memory limit of its cgroup, or a machine without free memory): what the in-memory
// paths compare their needs with before they allocate, where no explicit limit was given.
#pragma once

#include <string>

namespace tessera {

struct MemoryRoom {
  // Shared by every process of this node: the least of the room left under the cgroup's limit
  // (memory.max, or memory.limit_in_bytes with cgroup v1, of its cgroup and those above it; a
  // reclaimable page cache counts as room) and MemAvailable from /proc/meminfo. Infinite when
  // neither is known.
  double node_bytes;
  std::string node_source; // what bounds it: "the memory limit of cgroup /…", "MemAvailable"
  // This process alone: RLIMIT_AS less the address space it already uses. Infinite: no limit.
  double process_bytes;
};

// Reads the limits now (a few small files under /proc and /sys).
MemoryRoom memory_room();

} // namespace tessera
