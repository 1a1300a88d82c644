// Whether two file names name one file: through ./, .., symbolic links and hard links when both
// exist, by their absolute, normalised names otherwise.
#pragma once

#include <string>

namespace tessera::io {

bool same_file(const std::string& a, const std::string& b);

} // namespace tessera::io
