#include "core/dtype.hpp"

#include "core/throw.hpp"

namespace tessera {

std::size_t dtype_size(DType t) noexcept {
  switch (t) {
  case DType::i8:
  case DType::u8:
    return 1;
  case DType::i16:
  case DType::u16:
    return 2;
  case DType::f32:
  case DType::i32:
  case DType::u32:
    return 4;
  case DType::f64:
  case DType::c64:
  case DType::i64:
  case DType::u64:
    return 8;
  case DType::c128:
    return 16;
  }
  return 0;
}

std::string_view dtype_name(DType t) noexcept {
  switch (t) {
  case DType::f32:
    return "f32";
  case DType::f64:
    return "f64";
  case DType::c64:
    return "c64";
  case DType::c128:
    return "c128";
  case DType::i8:
    return "i8";
  case DType::i16:
    return "i16";
  case DType::i32:
    return "i32";
  case DType::i64:
    return "i64";
  case DType::u8:
    return "u8";
  case DType::u16:
    return "u16";
  case DType::u32:
    return "u32";
  case DType::u64:
    return "u64";
  }
  return "?";
}

bool dtype_is_real(DType t) noexcept {
  return t == DType::f32 || t == DType::f64;
}

bool dtype_is_integer(DType t) noexcept {
  return t != DType::f32 && t != DType::f64 && t != DType::c64 && t != DType::c128;
}

DType parse_dtype(std::string_view s) {
  if (s == "f32" || s == "float" || s == "float32")
    return DType::f32;
  if (s == "f64" || s == "double" || s == "float64")
    return DType::f64;
  if (s == "c64" || s == "complex64")
    return DType::c64;
  if (s == "c128" || s == "complex128")
    return DType::c128;
  for (const DType t : {DType::i8, DType::i16, DType::i32, DType::i64, DType::u8, DType::u16,
                        DType::u32, DType::u64}) {
    const std::string_view name = dtype_name(t);
    // "i16" or "int16", "u8" or "uint8".
    const std::string_view digits = name.substr(1);
    const std::string_view word = name[0] == 'i' ? "int" : "uint";
    if (s == name || (s.size() == word.size() + digits.size() && s.substr(0, word.size()) == word &&
                      s.substr(word.size()) == digits))
      return t;
  }
  TESSERA_THROW(InputError,
                "unknown element type '{}' (expected f32, f64, c64, c128, i8, i16, i32, i64, u8, "
                "u16, u32 or u64)",
                s);
}

DType parse_matrix_dtype(std::string_view s) {
  const DType t = parse_dtype(s);
  TESSERA_REQUIRE(!dtype_is_integer(t), InputError,
                  "element type '{}': matrices are f32, f64, c64 or c128", s);
  return t;
}

namespace detail {
void throw_not_real(DType t) {
  TESSERA_THROW(InputError, "reductions take f32 or f64 data, not {}", dtype_name(t));
}
void throw_not_matrix(DType t) {
  TESSERA_THROW(InputError,
                "{} data: matrix operations take f32, f64, c64 or c128 (integer arrays are moved "
                "by permutations of dimensions only)",
                dtype_name(t));
}
} // namespace detail

} // namespace tessera
