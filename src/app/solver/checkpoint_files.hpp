// The names of heat2d checkpoints on disk. One checkpoint file (output.checkpoint_file) is
// replaced by each new checkpoint; with output.checkpoint_keep = N each checkpoint also keeps a
// numbered name, NAME.ckpt.<step>.h5, and the N newest of them that a run wrote stay on disk,
// while NAME.ckpt.h5 names the newest (a hard link: the same file, no copy). A checkpoint a
// run restarted from is never removed by that run, so the deck stored in its output stays
// runnable.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::heat2d {

// "out.ckpt.h5", 200 → "out.ckpt.000200.h5" (digits beyond six as needed); a name without
// ".h5" gets ".<step>" appended.
std::string numbered_checkpoint_path(const std::string& path, std::int64_t step);

// Makes `alias` a second name of `target` (replacing what `alias` named before, atomically),
// or a copy of it where the file system has no hard links. Throws IoError naming both.
void link_checkpoint(const std::string& target, const std::string& alias);

// Removes a numbered checkpoint that is no longer kept; a failure is only logged.
void remove_checkpoint(const std::string& path) noexcept;

} // namespace tessera::heat2d
