// Wisdom: kernel choices measured on this kind of processor, kept in a text file that later
// runs reuse instead of timing again (as FFTW's wisdom). A file written by another tessera
// version, on another kind of processor (model name or instruction sets differ) or damaged is
// ignored with one warning, never trusted, and never overwritten. The per-user cache that the
// command line keeps by default (Kind::Cache) differs: its folder is created on first use, a
// file it cannot use is replaced by new wisdom, and failing to write it is no warning (a
// read-only home costs only the next run's trial).
//
//   tessera-wisdom 1
//   tessera 0.9.0
//   cpu AMD EPYC 7B13 | avx2
//   transpose 8 2 8192 8192 8192 8192 avx2-r64-b32-p
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tessera::cpu::detail {

// One timed decision: element size, threads, shape and leading dimensions.
struct TransposeKey {
  std::int64_t element_size, threads, rows, cols, ld_in, ld_out;
  auto operator<=>(const TransposeKey&) const = default;
};

// "<model name> | <instruction sets>" of this processor.
std::string processor_fingerprint();

// $XDG_CACHE_HOME/tessera/wisdom, else $HOME/.cache/tessera/wisdom; "" when neither is set.
std::string default_wisdom_cache();

class WisdomFile {
public:
  enum class Kind { Named, Cache };
  explicit WisdomFile(std::string path, Kind kind = Kind::Named)
      : path_(std::move(path)), kind_(kind) {}

  // The entries of the file for this version and processor; empty (and one warning) when the
  // file is missing entries of another kind. A missing file is no warning.
  std::map<TransposeKey, std::string> load();
  // Adds one entry and rewrites the file atomically (a temporary file renamed over it), keeping
  // its other entries; does nothing for a file that load() ignored. Failures warn.
  void store(const TransposeKey& key, const std::string& kernel);

  const std::string& path() const noexcept { return path_; }

private:
  enum class State { Unread, Usable, Ignored, Replace };
  std::optional<std::map<TransposeKey, std::string>> read(std::string& why) const;

  std::string path_;
  Kind kind_ = Kind::Named;
  State state_ = State::Unread;
};

} // namespace tessera::cpu::detail
