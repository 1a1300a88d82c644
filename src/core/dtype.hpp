// Element types: defined in the public header; the dispatch helpers here are internal.
#pragma once

#include <tessera/dtype.hpp>

namespace tessera {

// Calls f(T{}) with the C++ type of t: dispatch_dtype(t, [&](auto tag) { using T = decltype(tag); …
// });
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
    break;
  }
  return f(std::complex<double>{});
}

// As dispatch_dtype for the reducible types only; throws InputError for complex types.
namespace detail {
[[noreturn]] void throw_not_real(DType t);
}

template <class F>
decltype(auto) dispatch_real_dtype(DType t, F&& f) {
  if (t == DType::f32)
    return f(float{});
  if (t != DType::f64)
    detail::throw_not_real(t);
  return f(double{});
}

} // namespace tessera
