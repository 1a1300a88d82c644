// Object lookup by path (see h5_path.hpp).
#include "io/h5_path.hpp"

#include "core/throw.hpp"
#include "io/h5_error.hpp"

namespace tessera::io::detail {

bool path_exists(hid_t file, const std::string& path) {
  std::string prefix;
  std::size_t pos = 0;
  while (pos < path.size()) {
    const std::size_t next = path.find('/', pos);
    const std::size_t end = next == std::string::npos ? path.size() : next;
    if (end > pos) {
      const bool last = path.find_first_not_of('/', end) == std::string::npos;
      prefix.push_back('/');
      prefix.append(path, pos, end - pos);
      if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) {
        take_hdf5_error();
        return false;
      }
      if (!last) {
        const hid_t obj = H5Oopen(file, prefix.c_str(), H5P_DEFAULT);
        if (obj < 0) {
          take_hdf5_error();
          return false;
        }
        const unique_hid owner(obj);
        if (H5Iget_type(obj) != H5I_GROUP)
          return false;
      }
    }
    pos = end + 1;
  }
  return true;
}

unique_hid open_object(hid_t file, const std::string& file_name, const std::string& path) {
  if (!path_exists(file, path))
    TESSERA_THROW(InputError, "no object {} in '{}'", path, file_name);
  const hid_t obj = H5Oopen(file, path.c_str(), H5P_DEFAULT);
  if (obj < 0)
    TESSERA_THROW(IoError, "cannot open {} in '{}': {}", path, file_name, take_hdf5_error());
  return unique_hid(obj);
}

unique_hid open_dataset_object(hid_t file, const std::string& file_name, const std::string& path) {
  unique_hid obj = open_object(file, file_name, path);
  if (H5Iget_type(obj.get()) != H5I_DATASET)
    TESSERA_THROW(InputError, "{} in '{}' is a group, not a dataset", path, file_name);
  return obj;
}

} // namespace tessera::io::detail
