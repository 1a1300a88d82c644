// "FILE.h5:/path/to/dataset" as used on the command line and in decks.
#pragma once

#include <string>
#include <string_view>

namespace tessera::io {

struct DatasetRef {
  std::string file;
  std::string path; // always starts with '/'

  // Splits at the last ':' followed by '/'; throws InputError when there is none
  // ("expected FILE.h5:/dataset").
  static DatasetRef parse(std::string_view spec);
  std::string str() const { return file + ":" + path; }
};

} // namespace tessera::io
