// "FILE.h5:/path/to/dataset" as used on the command line and in decks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera::io {

struct DatasetRef {
  std::string file;
  std::string path; // always starts with '/'

  // Splits at the last ':' followed by '/'; throws InputError when there is none
  // ("expected FILE.h5:/dataset").
  static DatasetRef parse(std::string_view spec);
  // "FILE.h5:/a,/b": one reference per dataset of the file (a ',' followed by '/' separates
  // them); "FILE.h5:/a" gives one. Throws as parse() for each.
  static std::vector<DatasetRef> parse_list(std::string_view spec);
  std::string str() const { return file + ":" + path; }
};

} // namespace tessera::io
