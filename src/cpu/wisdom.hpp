// Wisdom: kernel choices measured on this kind of processor, kept in a text file that later
// runs reuse instead of timing again (as FFTW's wisdom). A file written by another tessera
// version, on another kind of processor (model name or instruction sets differ) or damaged is
// ignored with one warning, never trusted, and never overwritten.
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

class WisdomFile {
public:
  explicit WisdomFile(std::string path) : path_(std::move(path)) {}

  // The entries of the file for this version and processor; empty (and one warning) when the
  // file is missing entries of another kind. A missing file is no warning.
  std::map<TransposeKey, std::string> load();
  // Adds one entry and rewrites the file atomically (a temporary file renamed over it), keeping
  // its other entries; does nothing for a file that load() ignored. Failures warn.
  void store(const TransposeKey& key, const std::string& kernel);

  const std::string& path() const noexcept { return path_; }

private:
  enum class State { Unread, Usable, Ignored };
  std::optional<std::map<TransposeKey, std::string>> read(std::string& why) const;

  std::string path_;
  State state_ = State::Unread;
};

} // namespace tessera::cpu::detail
