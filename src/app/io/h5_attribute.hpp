// Attributes on groups and datasets of an H5File (collective), and the plain hid-level helpers
// they are built from.
//
// Strings are stored as scalar variable-length UTF-8 strings (h5py reads them as str);
// integers as 64-bit signed, doubles as 64-bit IEEE floats, both scalar.
#pragma once

#include <hdf5.h>

#include <optional>
#include <string>

#include "io/h5_file.hpp"

namespace tessera::io {

// Collective. `object` is a path in the file ("/" for the root group, "/A" for a dataset).
// Every rank writes rank 0's value (HDF5 requires identical attribute data on all ranks), and an
// existing attribute of the same name is replaced.
void write_attribute(H5File& f, const std::string& object, const std::string& name,
                     const std::string& value);
void write_attribute(H5File& f, const std::string& object, const std::string& name,
                     long long value);
void write_attribute(H5File& f, const std::string& object, const std::string& name, double value);
// Without this overload a string literal would pick the bool-like pointer conversion.
inline void write_attribute(H5File& f, const std::string& object, const std::string& name,
                            const char* value) {
  write_attribute(f, object, name, std::string(value));
}

// Collective. nullopt when the object has no attribute of that name; InputError naming the
// object when the object is missing or the attribute has another type class.
std::optional<std::string> read_string_attribute(const H5File& f, const std::string& object,
                                                 const std::string& name);
std::optional<long long> read_int_attribute(const H5File& f, const std::string& object,
                                            const std::string& name);
std::optional<double> read_double_attribute(const H5File& f, const std::string& object,
                                            const std::string& name);

namespace detail {
// On an open object (file, group or dataset id); local HDF5 calls, no MPI. In collective mode
// every rank must make the same calls.
void put_attribute(hid_t obj, const std::string& name, const std::string& value);
void put_attribute(hid_t obj, const std::string& name, long long value);
void put_attribute(hid_t obj, const std::string& name, double value);
std::optional<std::string> get_string_attribute(hid_t obj, const std::string& name);
std::optional<long long> get_int_attribute(hid_t obj, const std::string& name);
std::optional<double> get_double_attribute(hid_t obj, const std::string& name);
} // namespace detail

} // namespace tessera::io
