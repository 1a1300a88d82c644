// Element types in memory and in files (see h5_type.hpp).
#include "io/h5_type.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <vector>

#include "core/check.hpp"

namespace tessera::io {

namespace {

unique_hid complex_type(hid_t part, std::size_t part_size) {
  unique_hid t = checked_hid(H5Tcreate(H5T_COMPOUND, 2 * part_size), "H5Tcreate(H5T_COMPOUND)");
  CHECK_HDF5(H5Tinsert(t.get(), "r", 0, part));
  CHECK_HDF5(H5Tinsert(t.get(), "i", part_size, part));
  return t;
}

std::string member_name(hid_t type, unsigned i) {
  char* name = H5Tget_member_name(type, i);
  std::string s = name ? name : "?";
  H5free_memory(name);
  return s;
}

// f32 / f64 for an IEEE-like float of 4 or 8 bytes (any byte order: HDF5 converts).
std::optional<DType> real_dtype(hid_t type) {
  if (H5Tget_class(type) != H5T_FLOAT)
    return std::nullopt;
  switch (H5Tget_size(type)) {
  case 4:
    return DType::f32;
  case 8:
    return DType::f64;
  default:
    return std::nullopt;
  }
}

// The predefined HDF5 integer types of t in memory and in files (nothing to close).
struct IntegerTypes {
  hid_t memory, file;
};
IntegerTypes integer_types(DType t) {
  switch (t) {
  case DType::i8:
    return {H5T_NATIVE_INT8, H5T_STD_I8LE};
  case DType::i16:
    return {H5T_NATIVE_INT16, H5T_STD_I16LE};
  case DType::i32:
    return {H5T_NATIVE_INT32, H5T_STD_I32LE};
  case DType::i64:
    return {H5T_NATIVE_INT64, H5T_STD_I64LE};
  case DType::u8:
    return {H5T_NATIVE_UINT8, H5T_STD_U8LE};
  case DType::u16:
    return {H5T_NATIVE_UINT16, H5T_STD_U16LE};
  case DType::u32:
    return {H5T_NATIVE_UINT32, H5T_STD_U32LE};
  default:
    return {H5T_NATIVE_UINT64, H5T_STD_U64LE};
  }
}

// i8 … u64 for an integer of 1, 2, 4 or 8 bytes (any byte order: HDF5 converts).
std::optional<DType> integer_dtype(hid_t type) {
  const bool is_signed = H5Tget_sign(type) != H5T_SGN_NONE;
  switch (H5Tget_size(type)) {
  case 1:
    return is_signed ? DType::i8 : DType::u8;
  case 2:
    return is_signed ? DType::i16 : DType::u16;
  case 4:
    return is_signed ? DType::i32 : DType::u32;
  case 8:
    return is_signed ? DType::i64 : DType::u64;
  default:
    return std::nullopt;
  }
}

} // namespace

unique_hid h5_memory_type(DType t) {
  if (dtype_is_integer(t))
    return checked_hid(H5Tcopy(integer_types(t).memory), "H5Tcopy(native integer)");
  switch (t) {
  case DType::f32:
    return checked_hid(H5Tcopy(H5T_NATIVE_FLOAT), "H5Tcopy(H5T_NATIVE_FLOAT)");
  case DType::f64:
    return checked_hid(H5Tcopy(H5T_NATIVE_DOUBLE), "H5Tcopy(H5T_NATIVE_DOUBLE)");
  case DType::c64:
    return complex_type(H5T_NATIVE_FLOAT, sizeof(float));
  default:
    break;
  }
  return complex_type(H5T_NATIVE_DOUBLE, sizeof(double));
}

unique_hid h5_file_type(DType t) {
  if (dtype_is_integer(t))
    return checked_hid(H5Tcopy(integer_types(t).file), "H5Tcopy(little-endian integer)");
  switch (t) {
  case DType::f32:
    return checked_hid(H5Tcopy(H5T_IEEE_F32LE), "H5Tcopy(H5T_IEEE_F32LE)");
  case DType::f64:
    return checked_hid(H5Tcopy(H5T_IEEE_F64LE), "H5Tcopy(H5T_IEEE_F64LE)");
  case DType::c64:
    return complex_type(H5T_IEEE_F32LE, 4);
  default:
    break;
  }
  return complex_type(H5T_IEEE_F64LE, 8);
}

std::optional<DType> dtype_of_h5_type(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  if (cls == H5T_FLOAT)
    return real_dtype(type);
  if (cls == H5T_INTEGER)
    return integer_dtype(type);
  if (cls != H5T_COMPOUND || H5Tget_nmembers(type) != 2)
    return std::nullopt;
  if (member_name(type, 0) != "r" || member_name(type, 1) != "i")
    return std::nullopt;
  const unique_hid re = checked_hid(H5Tget_member_type(type, 0), "H5Tget_member_type");
  const unique_hid im = checked_hid(H5Tget_member_type(type, 1), "H5Tget_member_type");
  const auto r = real_dtype(re.get());
  const auto i = real_dtype(im.get());
  if (!r || r != i || H5Tget_member_offset(type, 0) != 0 ||
      H5Tget_member_offset(type, 1) != H5Tget_size(re.get()))
    return std::nullopt;
  return *r == DType::f32 ? DType::c64 : DType::c128;
}

std::string describe_h5_type(hid_t type) {
  // Integers keep their long description ("16-bit signed integer"): the messages that name them
  // are mostly refusals, where the words say more than "i16".
  if (const auto d = dtype_of_h5_type(type); d && !dtype_is_integer(*d))
    return std::string(dtype_name(*d));
  const std::size_t bits = 8 * H5Tget_size(type);
  switch (H5Tget_class(type)) {
  case H5T_INTEGER:
    return fmt::format("{}-bit {} integer", bits,
                       H5Tget_sign(type) == H5T_SGN_NONE ? "unsigned" : "signed");
  case H5T_FLOAT:
    return fmt::format("{}-bit float", bits);
  case H5T_STRING:
    return "string";
  case H5T_COMPOUND: {
    std::vector<std::string> names;
    const int n = H5Tget_nmembers(type);
    for (int i = 0; i < n; ++i)
      names.push_back(member_name(type, static_cast<unsigned>(i)));
    return fmt::format("compound {{{}}}", fmt::join(names, ", "));
  }
  case H5T_ENUM:
    return "enum";
  case H5T_ARRAY:
    return "array";
  case H5T_VLEN:
    return "variable-length sequence";
  case H5T_BITFIELD:
    return "bitfield";
  case H5T_OPAQUE:
    return "opaque";
  case H5T_REFERENCE:
    return "reference";
  case H5T_TIME:
    return "time";
  default:
    return "unknown type";
  }
}

} // namespace tessera::io
