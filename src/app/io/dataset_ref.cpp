// Parsing "FILE.h5:/path/to/dataset".
#include "io/dataset_ref.hpp"

#include "core/throw.hpp"

namespace tessera::io {

DatasetRef DatasetRef::parse(std::string_view spec) {
  // The last ":/" splits: file names may contain ':' (rarely), dataset paths never do.
  const std::size_t colon = spec.rfind(":/");
  if (colon == std::string_view::npos)
    TESSERA_THROW(InputError, "'{}' names no dataset (expected FILE.h5:/dataset)", spec);
  DatasetRef ref{std::string(spec.substr(0, colon)), std::string(spec.substr(colon + 1))};
  if (ref.file.empty())
    TESSERA_THROW(InputError, "'{}' names no file (expected FILE.h5:/dataset)", spec);
  if (ref.path.size() < 2 || ref.path.back() == '/')
    TESSERA_THROW(InputError, "'{}' names no dataset after the file (expected FILE.h5:/dataset)",
                  spec);
  return ref;
}

std::vector<DatasetRef> DatasetRef::parse_list(std::string_view spec) {
  const DatasetRef first = parse(spec);
  std::vector<DatasetRef> refs;
  std::string_view paths = first.path;
  for (;;) {
    const std::size_t comma = paths.find(",/");
    refs.push_back(parse(first.file + ":" + std::string(paths.substr(0, comma))));
    if (comma == std::string_view::npos)
      return refs;
    paths.remove_prefix(comma + 1);
  }
}

} // namespace tessera::io
