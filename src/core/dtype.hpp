// Element types: defined in the public header; the dispatch helpers here are internal.
#pragma once

#include <tessera/dtype.hpp>

namespace tessera {

// parse_dtype for the matrix operations (generate, decks, benchmarks): InputError for the
// integer types, naming the four they take.
DType parse_matrix_dtype(std::string_view s);

namespace detail {
[[noreturn]] void throw_not_real(DType t);
[[noreturn]] void throw_not_matrix(DType t);
} // namespace detail

// Calls f(T{}) with the C++ type of t, for the four types of the matrix operations (transpose
// plans, generated matrices); throws InputError for integer types, which only permutations of
// dimensions move (by size: cpu/permute.hpp). dispatch_dtype(t, [&](auto tag) { using T =
// decltype(tag); … });
template <class F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
  case DType::f32:
    return f(float{});
  case DType::f64:
    return f(double{});
  case DType::c64:
    return f(std::complex<float>{});
  case DType::c128:
    return f(std::complex<double>{});
  default:
    break;
  }
  detail::throw_not_matrix(t);
}

// As dispatch_dtype for the reducible types only; throws InputError for complex and integer types.

template <class F>
decltype(auto) dispatch_real_dtype(DType t, F&& f) {
  if (t == DType::f32)
    return f(float{});
  if (t != DType::f64)
    detail::throw_not_real(t);
  return f(double{});
}

} // namespace tessera
