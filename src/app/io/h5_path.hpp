// Looking up objects by path inside an open HDF5 file, with messages that name the file.
#pragma once

#include <hdf5.h>

#include <string>

#include "io/h5_handle.hpp"

namespace tessera::io::detail {

// True when every component of `path` ("/a/b/c") exists and all but the last are groups.
// Never throws for a missing component (H5Lexists alone fails on a missing intermediate group).
bool path_exists(hid_t file, const std::string& path);

// Opens the group or dataset at `path`; InputError "no object /x in 'f.h5'" when it is missing.
unique_hid open_object(hid_t file, const std::string& file_name, const std::string& path);
// As open_object, and InputError "/x in 'f.h5' is a group, not a dataset" for a group.
unique_hid open_dataset_object(hid_t file, const std::string& file_name, const std::string& path);

} // namespace tessera::io::detail
