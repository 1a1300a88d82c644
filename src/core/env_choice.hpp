// One of a few named settings from an environment variable: the switches that pick between
// kernels for a comparison (TESSERA_HEAT2D_TILE_KERNEL, TESSERA_CUDA_ROWS_KERNEL, …). Plain C++
// with no fmt in the header, so that CUDA sources can use it.
#pragma once

#include <initializer_list>
#include <string_view>

namespace tessera {

// The position of the variable's value in `names`; `fallback` when the variable is unset or
// empty, and, with a warning naming the accepted values, when it holds anything else.
int env_choice(const char* variable, std::initializer_list<std::string_view> names, int fallback);

} // namespace tessera
