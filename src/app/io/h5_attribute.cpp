// Scalar string / integer / double attributes (see h5_attribute.hpp).
#include "io/h5_attribute.hpp"

#include <cstdlib>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "io/h5_error.hpp"
#include "io/h5_path.hpp"
#include "io/h5_turns.hpp"
#include "mpi/collectives.hpp"

namespace tessera::io {

namespace detail {

namespace {

unique_hid utf8_vlen_string() {
  unique_hid t = checked_hid(H5Tcopy(H5T_C_S1), "H5Tcopy(H5T_C_S1)");
  CHECK_HDF5(H5Tset_size(t.get(), H5T_VARIABLE));
  CHECK_HDF5(H5Tset_cset(t.get(), H5T_CSET_UTF8));
  return t;
}

// A fresh scalar attribute `name` on obj (an old one of that name is deleted first).
unique_hid new_attribute(hid_t obj, const std::string& name, hid_t type) {
  const htri_t exists = H5Aexists(obj, name.c_str());
  CHECK_HDF5(exists);
  if (exists > 0)
    CHECK_HDF5(H5Adelete(obj, name.c_str()));
  const unique_hid space = checked_hid(H5Screate(H5S_SCALAR), "H5Screate(H5S_SCALAR)");
  return checked_hid(H5Acreate2(obj, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                     "H5Acreate2");
}

// The attribute when it exists (nullopt otherwise), after checking its type class.
std::optional<unique_hid> open_attribute(hid_t obj, const std::string& name, H5T_class_t want,
                                         const char* want_name) {
  const htri_t exists = H5Aexists(obj, name.c_str());
  CHECK_HDF5(exists);
  if (exists == 0)
    return std::nullopt;
  unique_hid attr = checked_hid(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "H5Aopen");
  const unique_hid type = checked_hid(H5Aget_type(attr.get()), "H5Aget_type");
  if (H5Tget_class(type.get()) != want)
    TESSERA_THROW(InputError, "attribute '{}' is not {}", name, want_name);
  return attr;
}

template <class T>
void put_number(hid_t obj, const std::string& name, T value, hid_t file_type, hid_t mem_type) {
  const unique_hid attr = new_attribute(obj, name, file_type);
  CHECK_HDF5(H5Awrite(attr.get(), mem_type, &value));
}

template <class T>
std::optional<T> get_number(hid_t obj, const std::string& name, H5T_class_t cls,
                            const char* cls_name, hid_t mem_type) {
  const auto attr = open_attribute(obj, name, cls, cls_name);
  if (!attr)
    return std::nullopt;
  T value{};
  CHECK_HDF5(H5Aread(attr->get(), mem_type, &value));
  return value;
}

} // namespace

void put_attribute(hid_t obj, const std::string& name, const std::string& value) {
  const unique_hid type = utf8_vlen_string();
  const unique_hid attr = new_attribute(obj, name, type.get());
  const char* text = value.c_str();
  CHECK_HDF5(H5Awrite(attr.get(), type.get(), &text));
}

void put_attribute(hid_t obj, const std::string& name, long long value) {
  put_number(obj, name, value, H5T_STD_I64LE, H5T_NATIVE_LLONG);
}

void put_attribute(hid_t obj, const std::string& name, double value) {
  put_number(obj, name, value, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
}

std::optional<std::string> get_string_attribute(hid_t obj, const std::string& name) {
  const auto attr = open_attribute(obj, name, H5T_STRING, "a string");
  if (!attr)
    return std::nullopt;
  const unique_hid file_type = checked_hid(H5Aget_type(attr->get()), "H5Aget_type");
  const htri_t vlen = H5Tis_variable_str(file_type.get());
  CHECK_HDF5(vlen);
  if (vlen > 0) {
    const unique_hid mem = utf8_vlen_string();
    CHECK_HDF5(H5Tset_cset(mem.get(), H5Tget_cset(file_type.get())));
    char* text = nullptr;
    CHECK_HDF5(H5Aread(attr->get(), mem.get(), &text));
    std::string value = text ? text : "";
    H5free_memory(text);
    return value;
  }
  // Fixed-length (as other tools write them): may be NUL-padded.
  std::string value(H5Tget_size(file_type.get()), '\0');
  CHECK_HDF5(H5Aread(attr->get(), file_type.get(), value.data()));
  value.resize(value.find('\0') == std::string::npos ? value.size() : value.find('\0'));
  return value;
}

std::optional<long long> get_int_attribute(hid_t obj, const std::string& name) {
  return get_number<long long>(obj, name, H5T_INTEGER, "an integer", H5T_NATIVE_LLONG);
}

std::optional<double> get_double_attribute(hid_t obj, const std::string& name) {
  return get_number<double>(obj, name, H5T_FLOAT, "a floating-point number", H5T_NATIVE_DOUBLE);
}

} // namespace detail

namespace {

template <class T>
void write_any(H5File& f, const std::string& object, const std::string& name, T value) {
  mpi::broadcast(f.comm(), value); // HDF5 wants the same attribute data from every rank
  detail::change_metadata(f, [&](hid_t file) {
    const unique_hid obj = detail::open_object(file, f.path(), object);
    detail::put_attribute(obj.get(), name, value);
  });
}

template <class T, class Get>
std::optional<T> read_any(const H5File& f, const std::string& object, const std::string& name,
                          Get get) {
  std::optional<T> value;
  detail::read_metadata(f, [&](hid_t file) {
    const unique_hid obj = detail::open_object(file, f.path(), object);
    try {
      value = get(obj.get(), name);
    } catch (const InputError& e) {
      TESSERA_THROW(InputError, "{} in '{}': {}", object, f.path(), e.what());
    }
  });
  return value;
}

} // namespace

void write_attribute(H5File& f, const std::string& object, const std::string& name,
                     const std::string& value) {
  write_any(f, object, name, value);
}
void write_attribute(H5File& f, const std::string& object, const std::string& name,
                     long long value) {
  write_any(f, object, name, value);
}
void write_attribute(H5File& f, const std::string& object, const std::string& name, double value) {
  write_any(f, object, name, value);
}

std::optional<std::string> read_string_attribute(const H5File& f, const std::string& object,
                                                 const std::string& name) {
  return read_any<std::string>(f, object, name, detail::get_string_attribute);
}
std::optional<long long> read_int_attribute(const H5File& f, const std::string& object,
                                            const std::string& name) {
  return read_any<long long>(f, object, name, detail::get_int_attribute);
}
std::optional<double> read_double_attribute(const H5File& f, const std::string& object,
                                            const std::string& name) {
  return read_any<double>(f, object, name, detail::get_double_attribute);
}

} // namespace tessera::io
