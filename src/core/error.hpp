// Typed exceptions carrying the file and line where they were raised: defined in the public
// header (no fmt there: CUDA sources include this header; TESSERA_THROW lives in core/throw.hpp).
// Entry points turn them into one clear line and a non-zero exit (see app/main.cpp); nothing
// else prints them.
#pragma once

#include <tessera/error.hpp>
