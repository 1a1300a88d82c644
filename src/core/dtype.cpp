#include "core/dtype.hpp"

#include "core/throw.hpp"

namespace tessera {

std::size_t dtype_size(DType t) noexcept {
  switch (t) {
  case DType::f32:
    return 4;
  case DType::f64:
  case DType::c64:
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
  }
  return "?";
}

bool dtype_is_real(DType t) noexcept {
  return t == DType::f32 || t == DType::f64;
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
  TESSERA_THROW(InputError, "unknown element type '{}' (expected f32, f64, c64 or c128)", s);
}

namespace detail {
void throw_not_real(DType t) {
  TESSERA_THROW(InputError, "reductions take f32 or f64 data, not {}", dtype_name(t));
}
} // namespace detail

} // namespace tessera
