// The shape check every CPU reduction kernel starts with.
#pragma once

#include <cstdint>

#include "core/throw.hpp"

namespace tessera::cpu::detail {

inline void require_shape(const char* what, std::int64_t rows, std::int64_t cols) {
  TESSERA_REQUIRE(rows >= 0 && cols >= 0, InputError, "{}: negative shape {}x{}", what, rows, cols);
}

} // namespace tessera::cpu::detail
