// Files a process removes when a signal ends it: the temporaries of unfinished outputs and the
// locks it holds on their names. A signal handler may neither lock nor allocate, so the names
// live in a fixed table of slots, each published to the handler by an atomic flag once written.
#pragma once

#include <string>

namespace tessera::signal_removals {

// Remembers `path` until forget(); returns its slot, or -1 when the table is full or the path
// too long (the file is then left behind only if a signal ends the process). With
// `with_side_files`, files named `path` + "-…" go too: what MPI-IO keeps beside a file it has
// open (Open MPI's shared file pointer, PATH-JOB-PID.lock), which it would remove at the close.
int remember(const std::string& path, bool with_side_files = false) noexcept;
// Forgets the slot (-1 is ignored). Call it before the file is renamed or removed by its owner.
void forget(int slot) noexcept;
// Async-signal-safe: removes every remembered file; returns how many it removed.
int remove_all() noexcept;

} // namespace tessera::signal_removals
