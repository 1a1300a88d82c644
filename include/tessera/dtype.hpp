// Element types tessera moves (transpose: all four) and reduces (f32, f64; accumulation in f64).
#pragma once

#include <complex>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include <tessera/export.h>

namespace tessera {

enum class DType { f32, f64, c64, c128 };

template <class T>
struct dtype_traits;
template <>
struct dtype_traits<float> {
  static constexpr DType value = DType::f32;
};
template <>
struct dtype_traits<double> {
  static constexpr DType value = DType::f64;
};
template <>
struct dtype_traits<std::complex<float>> {
  static constexpr DType value = DType::c64;
};
template <>
struct dtype_traits<std::complex<double>> {
  static constexpr DType value = DType::c128;
};
template <class T>
inline constexpr DType dtype_of = dtype_traits<std::remove_cv_t<T>>::value;

TESSERA_API std::size_t dtype_size(DType t) noexcept;
TESSERA_API std::string_view dtype_name(DType t) noexcept;
TESSERA_API bool dtype_is_real(DType t) noexcept;
// Parses "f32", "f64", "c64", "c128" (also "float", "double", "complex64", "complex128");
// throws InputError naming the accepted values.
TESSERA_API DType parse_dtype(std::string_view s);

} // namespace tessera
