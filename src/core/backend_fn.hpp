// Functions of an optional backend (CUDA, NCCL), declared once for builds with and without it:
//
//   TESSERA_CUDA_FN(declaration);              TESSERA_NCCL_FN(declaration);
//   TESSERA_CUDA_FN_OR(value, declaration);    TESSERA_NCCL_FN_OR(value, declaration);
//
// With the backend in the build (TESSERA_HAVE_CUDA or TESSERA_HAVE_NCCL is 1) each is the plain
// declaration, defined in the backend's sources. Without it, the same declaration becomes an
// inline definition whose body throws NotCompiled naming the function, or, with _OR, returns
// `value` (for queries that have an answer without the backend: false, 0, nothing; `value` may
// name the parameters). A stub is never written by hand, so it cannot drift from its function.
#pragma once

namespace tessera::detail {

// Throw NotCompiled naming the function and how to get the backend (core/backend_fn.cpp: the
// message is formatted there, out of the CUDA compiler's sight).
[[noreturn]] void cuda_not_compiled(const char* function);
[[noreturn]] void nccl_not_compiled(const char* function);

} // namespace tessera::detail

#define TESSERA_BACKEND_CAT_(a, b) a##b
#define TESSERA_BACKEND_FN_(have, body, ...)                                                       \
  TESSERA_BACKEND_CAT_(TESSERA_BACKEND_FN_, have)(body, __VA_ARGS__)
#define TESSERA_BACKEND_FN_1(body, ...) __VA_ARGS__
// The stub's parameters are named (they are the declaration's) and mostly unused; the closing
// static_assert takes the `;` written after the macro, which would be an extra one after a body.
#define TESSERA_BACKEND_FN_0(body, ...)                                                            \
  _Pragma("GCC diagnostic push")                                                                   \
      _Pragma("GCC diagnostic ignored \"-Wunused-parameter\"") inline __VA_ARGS__{body} _Pragma(   \
          "GCC diagnostic pop") static_assert(true)

#define TESSERA_CUDA_FN(...)                                                                       \
  TESSERA_BACKEND_FN_(TESSERA_HAVE_CUDA, ::tessera::detail::cuda_not_compiled(__func__);           \
                      , __VA_ARGS__)
#define TESSERA_CUDA_FN_OR(value, ...)                                                             \
  TESSERA_BACKEND_FN_(TESSERA_HAVE_CUDA, return value;, __VA_ARGS__)
#define TESSERA_NCCL_FN(...)                                                                       \
  TESSERA_BACKEND_FN_(TESSERA_HAVE_NCCL, ::tessera::detail::nccl_not_compiled(__func__);           \
                      , __VA_ARGS__)
#define TESSERA_NCCL_FN_OR(value, ...)                                                             \
  TESSERA_BACKEND_FN_(TESSERA_HAVE_NCCL, return value;, __VA_ARGS__)
