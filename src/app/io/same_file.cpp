#include "io/same_file.hpp"

#include <filesystem>
#include <system_error>

namespace tessera::io {

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec))
    return fs::equivalent(a, b, ec);
  // Absolute first: weakly_canonical leaves a relative path with no existing prefix as it is.
  return fs::weakly_canonical(fs::absolute(a, ec), ec) ==
         fs::weakly_canonical(fs::absolute(b, ec), ec);
}

} // namespace tessera::io
