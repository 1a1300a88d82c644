// The git commit this build was made from (`tessera info`, provenance). Defined in a file that
// CMake generates at configure time (cmake/build_info.cpp.in), so that a new commit recompiles
// that one file rather than every file that sees a compile definition.
#pragma once

namespace tessera {

const char* build_git_hash() noexcept;

} // namespace tessera
