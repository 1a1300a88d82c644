// Element types tessera moves and reduces: matrix transposes move f32, f64, c64 and c128,
// reductions take f32 and f64 (accumulated in f64), and permutations of dimensions move every
// type, the signed and unsigned integers of 8 to 64 bits included.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <tessera/export.h>

namespace tessera {

enum class DType { f32, f64, c64, c128, i8, i16, i32, i64, u8, u16, u32, u64 };

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
#define TESSERA_INTEGER_DTYPE(T, D)                                                                \
  template <>                                                                                      \
  struct dtype_traits<T> {                                                                         \
    static constexpr DType value = DType::D;                                                       \
  };
TESSERA_INTEGER_DTYPE(std::int8_t, i8)
TESSERA_INTEGER_DTYPE(std::int16_t, i16)
TESSERA_INTEGER_DTYPE(std::int32_t, i32)
TESSERA_INTEGER_DTYPE(std::int64_t, i64)
TESSERA_INTEGER_DTYPE(std::uint8_t, u8)
TESSERA_INTEGER_DTYPE(std::uint16_t, u16)
TESSERA_INTEGER_DTYPE(std::uint32_t, u32)
TESSERA_INTEGER_DTYPE(std::uint64_t, u64)
#undef TESSERA_INTEGER_DTYPE
template <class T>
inline constexpr DType dtype_of = dtype_traits<std::remove_cv_t<T>>::value;

TESSERA_API std::size_t dtype_size(DType t) noexcept;
TESSERA_API std::string_view dtype_name(DType t) noexcept;
// f32 or f64: the floating types reductions take.
TESSERA_API bool dtype_is_real(DType t) noexcept;
// i8 … i64, u8 … u64.
TESSERA_API bool dtype_is_integer(DType t) noexcept;
// Parses "f32", "f64", "c64", "c128" (also "float", "double", "complex64", "complex128") and
// "i8" … "u64" (also "int8" … "uint64"); throws InputError naming the accepted values.
TESSERA_API DType parse_dtype(std::string_view s);

} // namespace tessera
