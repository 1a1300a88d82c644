// TESSERA_THROW / TESSERA_REQUIRE: raise a typed tessera::Error with a formatted message and
// the file and line. Host C++ only (fmt's compile-time format checks do not pass nvcc).
#pragma once

#include <fmt/format.h>

#include "core/error.hpp"

// TESSERA_THROW(InputError, "grid.nx must be positive, got {}", nx)
#define TESSERA_THROW(Kind, ...)                                                                   \
  throw ::tessera::Kind(::fmt::format(__VA_ARGS__), __FILE__, __LINE__)

#define TESSERA_REQUIRE(cond, Kind, ...)                                                           \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      TESSERA_THROW(Kind, __VA_ARGS__);                                                            \
  } while (false)
