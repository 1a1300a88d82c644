// Numbered checkpoint names, the link to the newest, and their removal (see checkpoint_files.hpp).
#include "solver/checkpoint_files.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "core/log.hpp"
#include "core/throw.hpp"

namespace tessera::heat2d {

namespace fs = std::filesystem;

std::string numbered_checkpoint_path(const std::string& path, std::int64_t step) {
  const std::string ext = ".h5";
  if (path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0)
    return fmt::format("{}.{:06d}{}", path.substr(0, path.size() - ext.size()), step, ext);
  return fmt::format("{}.{:06d}", path, step);
}

void link_checkpoint(const std::string& target, const std::string& alias) {
  std::error_code ec;
  if (fs::equivalent(target, alias, ec))
    return;
  // Linked under a temporary name, then renamed over the alias: the alias always names a
  // complete checkpoint, the old one or the new one.
  const std::string tmp = alias + ".link.partial";
  fs::remove(tmp, ec);
  fs::create_hard_link(target, tmp, ec);
  if (ec) // no hard links on this file system: a copy does the same, with the space it takes
    fs::copy_file(target, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec)
    fs::rename(tmp, alias, ec);
  if (ec) {
    fs::remove(tmp);
    TESSERA_THROW(IoError, "cannot make '{}' name the checkpoint '{}': {}", alias, target,
                  ec.message());
  }
}

void remove_checkpoint(const std::string& path) noexcept {
  std::error_code ec;
  fs::remove(path, ec);
  if (ec)
    log::warn("could not remove the old checkpoint '{}': {}", path, ec.message());
}

} // namespace tessera::heat2d
