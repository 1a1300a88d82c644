// RAII for HDF5 identifiers: unique_hid closes any id (file, group, dataset, dataspace,
// datatype, attribute, property list) with the matching H5?close, chosen by H5Iget_type.
#pragma once

#include <hdf5.h>

#include <source_location>

#include "core/unique_handle.hpp"

namespace tessera::io {

struct HidTraits {
  using type = hid_t;
  static hid_t null() noexcept { return H5I_INVALID_HID; }
  // Closes by the id's type; a failure is logged, never thrown (it runs while unwinding).
  static void destroy(hid_t id) noexcept;
};
using unique_hid = unique_handle<HidTraits>;

// Takes ownership of an id returned by an HDF5 call, throwing IoError (with HDF5's innermost
// message) when the call failed: unique_hid space = checked_hid(H5Dget_space(d), "H5Dget_space").
unique_hid checked_hid(hid_t id, const char* what,
                       std::source_location where = std::source_location::current());

} // namespace tessera::io
